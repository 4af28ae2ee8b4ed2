import t from '../support/file-test.js'
import { STORAGE_FULL_DETAIL } from '../../src/errors/index.js'
import { needs } from '../services.js'
import { cycleCsv, fillWalSegment, linesSince, MiB, onFullDisk, serviceOn, storedRows, upload } from './_full-disk.js'

/** D61: PGlite's data directory on a tmpfs without room for the next WAL segment: PGlite stops. */

t.test('[D61] no room for the next 16 MiB WAL segment: PGlite stops (a PANIC), the upload answers 507, and a restart finds nothing written', await needs('tmpfs'), async (t) => {
  const { disk, dataDir } = await onFullDisk(t, 96 * MiB)
  const first = await serviceOn(t, dataDir)
  let closed = false
  t.teardown(async () => { if (!closed) await first.app.close() })
  t.equal((await upload(first.url, cycleCsv(2))).status, 201)

  // the WAL a megabyte or two short of its segment's end, then room for the rows but not for a new segment
  await fillWalSegment(first.app)
  disk.resize(disk.used() + 8 * MiB)
  const before = first.lines.length
  const res = await upload(first.url, cycleCsv(20_000, '15-11-2026', '14-12-2026'))
  t.equal(res.status, 507)
  t.same(await res.json(), { detail: STORAGE_FULL_DETAIL })
  const written = linesSince(first, before)
  t.equal(written.length, 1, 'one line for the failure')
  t.match(written[0], { level: 50, res: { statusCode: 507 }, err: { severity: 'PANIC' } })
  t.ok(first.lines[before]!.length < 1000, `short: ${first.lines[before]!.length} characters`)

  // The stopped database answers every read as unreachable (D27), one line and a count for all of them.
  for (let i = 0; i < 5; i++) {
    const read = await fetch(`${first.url}/v1/prices?town=Nairobi&limit=${i + 1}`)
    t.equal(read.status, 500)
    t.same(await read.json(), { detail: 'Internal Server Error' })
  }
  await first.app.close()
  closed = true
  const reads = linesSince(first, before + 1)
  t.same(reads.map((l) => [l.msg, l.repeats]), [['request completed', undefined], ['request completed (repeated 4 times within 10 s)', 4]])

  disk.resize(96 * MiB) // space freed; the service restarted recovers from its WAL
  const second = await serviceOn(t, dataDir)
  t.teardown(async () => { await second.app.close() })
  t.equal(await storedRows(second.url), 2, 'nothing of the failed upload was written')
  t.equal((await upload(second.url, cycleCsv(3, '15-11-2026', '14-12-2026'))).status, 201, 'and uploads work again')
})
