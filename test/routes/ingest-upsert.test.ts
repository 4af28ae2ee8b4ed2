import t from '../support/file-test.js'
import { build, resetData } from '../helper.js'
import { HEADER, TOKEN, csv, rowCount, storedRows, upload, withoutTimestamp, type StoredRow } from '../fixtures/ingest.js'
import { loadSampleTowns } from '../../scripts/sample/generate.js'

/** Spec 4.5 rule 6 (upsert by (town, valid_from)), D14, D15, the dry run, and the cache. */

t.beforeEach(resetData)

const app = async (t: Parameters<typeof build>[0]) => await build(t, { config: { ingestToken: TOKEN } })

const JAN = '15-01-2026,14-02-2026'
const FEB = '15-02-2026,14-03-2026'
const DEC = '15-12-2025,14-01-2026'

/** A dry-run cycle's lists when every one fits in the answer: nothing left unlisted. */
const listed = (towns: { new_towns: string[], missing_towns: string[] }): Record<string, unknown> =>
  ({ ...towns, new_towns_not_listed: 0, missing_towns_not_listed: 0, warnings: [], warnings_not_listed: 0, changes_not_listed: 0 })

const row = (id: number, town: string, prices: [string, string, string], validFrom = '2026-01-15', validTo = '2026-02-14'): StoredRow =>
  ({ id, town, super_petrol: prices[0], diesel: prices[1], kerosene: prices[2], valid_from: validFrom, valid_to: validTo })

t.test('[spec 4.5 r6, D15] re-uploading the same file changes nothing and keeps ids', async (t) => {
  const a = await app(t)
  const file = csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`, `${JAN},Mombasa,178.00,168.00,158.00`, `${FEB},Nairobi,181.00,171.00,161.00`)
  t.strictSame(withoutTimestamp((await upload(a, file)).json()), { status: 'success', records_processed: 3, inserted: 3, updated: 0, unchanged: 0 })
  const before = await storedRows()
  const again = await upload(a, file)
  t.equal(again.statusCode, 201)
  t.strictSame(withoutTimestamp(again.json()), { status: 'success', records_processed: 3, inserted: 0, updated: 0, unchanged: 3 })
  t.strictSame(await storedRows(), before)

  // The same values written differently are the same numeric(6,2): unchanged, not updated.
  const respelled = await upload(a, csv(HEADER, `${JAN},NAIROBI,180.5,170,160.25`))
  t.strictSame(withoutTimestamp(respelled.json()), { status: 'success', records_processed: 1, inserted: 0, updated: 0, unchanged: 1 })
  t.strictSame(await storedRows(), before)
})

t.test('[spec 4.5 r6] updating one price keeps its id and changes the value; a new pair gets a new id', async (t) => {
  const a = await app(t)
  await upload(a, csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`, `${JAN},Mombasa,178.00,168.00,158.00`))
  const res = await upload(a, csv(HEADER, `${JAN},Mombasa,178.00,168.00,158.00`, `${JAN},Nairobi,180.50,170.00,161.99`, `${JAN},Kisumu,182.00,172.00,162.00`))
  t.strictSame(withoutTimestamp(res.json()), { status: 'success', records_processed: 3, inserted: 1, updated: 1, unchanged: 1 })
  const stored = await storedRows()
  // ON CONFLICT draws a sequence value for every proposed row, so a new id is unique and larger,
  // not necessarily the next integer (spec 2: ids carry no order meaning).
  const kisumuId = stored[0]?.id ?? 0
  t.ok(kisumuId > 2, `new row, new id (${kisumuId})`)
  t.strictSame(stored, [
    row(kisumuId, 'Kisumu', ['182.00', '172.00', '162.00']),
    row(2, 'Mombasa', ['178.00', '168.00', '158.00']),
    row(1, 'Nairobi', ['180.50', '170.00', '161.99'])
  ])
})

t.test('[dry run] 200 with the counts an ingest would give, cycles newest first, nothing written', async (t) => {
  const a = await app(t)
  let clears = 0
  const clear = a.readCache.clear.bind(a.readCache)
  a.readCache.clear = () => { clears++; clear() }
  await upload(a, csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`, `${JAN},Mombasa,178.00,168.00,158.00`, `${JAN},Kisumu,182.00,172.00,162.00`))
  // The ingest refreshes the cache once; on PostgreSQL its own notification, heard back before it
  // answers, clears nothing more.
  t.equal(clears, 1)
  const before = await storedRows()

  const file = csv(
    HEADER,
    `${JAN},Nairobi,180.50,170.00,160.25`, // unchanged
    `${JAN},Mombasa,178.00,168.00,158.01`, // updated
    `${JAN},Kisumu,182.00,172.00,162.00`, // unchanged
    `${FEB},Nairobi,181.00,171.00,161.00`, // inserted
    `${JAN},Eldoret,183.00,173.00,163.00`, // inserted
    `${DEC},Nairobi,179.00,169.00,159.00` // inserted
  )
  const dry = await upload(a, file, { query: '?dry_run=true' })
  t.equal(dry.statusCode, 200)
  t.equal(dry.headers['cache-control'], 'no-store')
  t.strictSame(dry.json(), {
    status: 'dry_run',
    records_processed: 6,
    inserted: 3,
    updated: 1,
    unchanged: 2,
    cycles: [
      // [D40] each compared with the cycle before it as it would stand after the upload: its
      // towns, and each town's prices there and in the file (what the admin page charts, D58)
      {
        ...listed({ new_towns: [], missing_towns: ['Eldoret', 'Kisumu', 'Mombasa'] }),
        valid_from: '2026-02-15',
        valid_to: '2026-03-14',
        previous_valid_from: '2026-01-15',
        changes: [{ town: 'Nairobi', previous: { super_petrol: 180.5, diesel: 170, kerosene: 160.25 }, price: { super_petrol: 181, diesel: 171, kerosene: 161 } }],
        // [D73] 3 of January's 4 towns missing
        cycle_warnings: [{ kind: 'missing_towns', detail: 'Cycle 2026-02-15 would lack 3 of the 4 towns of cycle 2026-01-15 (75.0%, more than 10.0%).' }]
      },
      {
        ...listed({ new_towns: ['Eldoret', 'Kisumu', 'Mombasa'], missing_towns: [] }),
        valid_from: '2026-01-15',
        valid_to: '2026-02-14',
        previous_valid_from: '2025-12-15',
        changes: [{ town: 'Nairobi', previous: { super_petrol: 179, diesel: 169, kerosene: 159 }, price: { super_petrol: 180.5, diesel: 170, kerosene: 160.25 } }],
        cycle_warnings: []
      },
      { ...listed({ new_towns: [], missing_towns: [] }), valid_from: '2025-12-15', valid_to: '2026-01-14', previous_valid_from: null, changes: [], cycle_warnings: [] }
    ]
  })
  t.strictSame(await storedRows(), before, 'nothing written')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(clears, 1, 'nothing written, so no cache is cleared, here or (D26) elsewhere')

  const real = await upload(a, file, { query: '?dry_run=false' })
  t.equal(real.statusCode, 201)
  t.strictSame(withoutTimestamp(real.json()), { status: 'success', records_processed: 6, inserted: 3, updated: 1, unchanged: 2 }, 'as the dry run said')
  t.equal(await rowCount(), 6)
})

t.test('[dry run] runs every check: a bad file is the same 400', async (t) => {
  const res = await upload(await app(t), csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`, `${JAN},nairobi,1,1,1`), { query: '?dry_run=true' })
  t.equal(res.statusCode, 400)
  t.strictSame(res.json(), { detail: 'Duplicate row for Nairobi from 2026-01-15 on lines 2 and 3', line: 3 })
})

t.test('[spec 4.2 r6] GET /v1/prices/latest shows an ingest on the very next call', async (t) => {
  const a = await app(t)
  await upload(a, csv(HEADER, `${JAN},Nairobi,180.50,170.00,160.25`, `${JAN},Mombasa,178.00,168.00,158.00`))
  const latest = async () => (await a.inject({ method: 'GET', url: '/v1/prices/latest?town=nairobi' })).json()
  t.strictSame(await latest(), [{ id: 1, town: 'Nairobi', super_petrol: 180.5, diesel: 170, kerosene: 160.25, valid_from: '2026-01-15', valid_to: '2026-02-14' }])
  t.strictSame(await latest(), [{ id: 1, town: 'Nairobi', super_petrol: 180.5, diesel: 170, kerosene: 160.25, valid_from: '2026-01-15', valid_to: '2026-02-14' }])
  t.strictSame([a.readCache.latestHits, a.readCache.latestMisses], [2, 0], 'the ingest answered with the latest prices loaded: both calls were served from the cache')

  t.equal((await upload(a, csv(HEADER, `${JAN},Nairobi,199.99,170.00,160.25`))).statusCode, 201)
  t.strictSame(await latest(), [{ id: 1, town: 'Nairobi', super_petrol: 199.99, diesel: 170, kerosene: 160.25, valid_from: '2026-01-15', valid_to: '2026-02-14' }])

  // D1: a newly published cycle is the latest at once.
  t.equal((await upload(a, csv(HEADER, `${FEB},Nairobi,185.00,175.00,165.00`))).statusCode, 201)
  const [feb] = await latest() as Array<{ id: number }>
  t.ok(feb !== undefined && feb.id > 2)
  t.strictSame([feb], [{ id: feb?.id, town: 'Nairobi', super_petrol: 185, diesel: 175, kerosene: 165, valid_from: '2026-02-15', valid_to: '2026-03-14' }])
})

t.test('[D14] ten concurrent overlapping uploads: all 201, no duplicate, the table is exactly one of them', async (t) => {
  // Ten at once, with a queue that admits them all (D57): they queue behind the ingest lock.
  const a = await build(t, { config: { ingestToken: TOKEN, uploadQueueSize: 10 } })
  const towns = loadSampleTowns()
  const cycles = [DEC, JAN]
  // Upload k: every (town, cycle) with its own prices, so any interleaving would show.
  const files = Array.from({ length: 10 }, (_, k) => csv(HEADER, ...cycles.flatMap((cycle) =>
    towns.map((town, i) => `${cycle},${town},${(150 + k + i / 100).toFixed(2)},${(140 + k).toFixed(2)},${(130 + k).toFixed(2)}`))))
  const total = towns.length * cycles.length

  const results = await Promise.all(files.map(async (file) => await upload(a, file)))
  t.strictSame(results.map((r) => r.statusCode), Array(10).fill(201))
  const bodies = results.map((r) => r.json() as { inserted: number, updated: number, unchanged: number, records_processed: number })
  t.strictSame(bodies.map((b) => b.records_processed), Array(10).fill(total))
  // Serialised (D14): the first to commit inserted everything, each later one updated everything.
  t.strictSame(bodies.map((b) => b.inserted).sort((x, y) => x - y), [...Array(9).fill(0), total])
  t.strictSame(bodies.map((b) => b.updated).sort((x, y) => x - y), [0, ...Array(9).fill(total)])
  t.strictSame(bodies.map((b) => b.unchanged), Array(10).fill(0))

  const stored = await storedRows()
  t.equal(stored.length, total)
  t.equal(new Set(stored.map((r) => `${r.town}|${r.valid_from}`)).size, total, 'no duplicate (town, valid_from)')
  t.strictSame(stored.map((r) => r.id).sort((x, y) => x - y), Array.from({ length: total }, (_, i) => i + 1), 'ids 1..N, kept by every update')
  const matching = Array.from({ length: 10 }, (_, k) => k).filter((k) => stored.every((r) => {
    const i = towns.indexOf(r.town)
    return r.super_petrol === (150 + k + i / 100).toFixed(2) && r.diesel === (140 + k).toFixed(2) && r.kerosene === (130 + k).toFixed(2)
  }))
  t.equal(matching.length, 1, `every row holds the prices of one and the same upload (${matching.join(', ')})`)
})
