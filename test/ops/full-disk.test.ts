import t from '../support/file-test.js'
import { STORAGE_FULL_DETAIL } from '../../src/errors/index.js'
import { needs } from '../services.js'
import { cycleCsv, linesSince, MiB, onFullDisk, serviceOn, storedRows, upload } from './_full-disk.js'

/** D61: PGlite's data directory on a tmpfs with a megabyte left: an upload its table cannot hold. */

t.test('[D61] a table that cannot grow: 507 in the envelope, one short line, nothing written', await needs('tmpfs'), async (t) => {
  const { disk, dataDir } = await onFullDisk(t, 96 * MiB)
  const service = await serviceOn(t, dataDir)
  t.teardown(async () => { await service.app.close() })
  t.equal((await upload(service.url, cycleCsv(2))).status, 201)

  disk.resize(disk.used() + MiB) // a megabyte left: the table's next extension fails
  const before = service.lines.length
  const res = await upload(service.url, cycleCsv(30_000, '15-11-2026', '14-12-2026'))
  t.equal(res.status, 507)
  t.same(await res.json(), { detail: STORAGE_FULL_DETAIL })
  t.equal(res.headers.get('cache-control'), 'no-store')

  const written = linesSince(service, before)
  t.equal(written.length, 1, 'one line for the failure')
  const longest = Math.max(...service.lines.slice(before).map((l) => l.length))
  t.ok(longest < 1000, `short: ${longest} characters`)
  t.match(written[0], { level: 50, msg: 'request completed', res: { statusCode: 507 }, err: { code: '53100', severity: 'ERROR', message: /No space left on device/ } })
  t.notMatch(service.lines.slice(before).join(''), /Town 0|json_to_recordset|INSERT/i, 'no rows, no SQL')
  t.equal(await storedRows(service.url), 2, 'nothing written')
})
