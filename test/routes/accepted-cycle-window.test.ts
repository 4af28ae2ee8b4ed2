import t from '../support/file-test.js'
import { acceptedCycleWindow } from '../../src/domain/cycle.js'
import { HEADER, csv, upload } from '../fixtures/ingest.js'
import { build, resetData } from '../helper.js'

/** D48: an upload's cycles lie between 1970 and three cycles after today's. */
t.test('[D48] the window of accepted cycles', async (t) => {
  t.same(acceptedCycleWindow(new Date('2026-11-25T12:00:00Z')), { earliest: '1970-01-15', latest: '2027-02-15' })
  // Kenya is UTC+3: on 14 Nov at 22:00 UTC it is already the 15th there, today's cycle is November's.
  t.same(acceptedCycleWindow(new Date('2026-11-14T22:00:00Z')), { earliest: '1970-01-15', latest: '2027-02-15' })
  t.same(acceptedCycleWindow(new Date('2026-11-14T20:00:00Z')), { earliest: '1970-01-15', latest: '2027-01-15' })
})

t.test('[D48] a cycle of 9999 or 1800 is refused with its line, by the ingest and the dry run', async (t) => {
  const app = await build(t)
  await resetData()
  const { latest } = acceptedCycleWindow()
  const [y, m] = latest.split('-').map(Number) as [number, number]
  const dmy = (year: number, month: number, day: number): string => `${String(day).padStart(2, '0')}-${String(month).padStart(2, '0')}-${year}`
  const after = (year: number, month: number): [number, number] => month === 12 ? [year + 1, 1] : [year, month + 1]
  const [ny, nm] = after(y, m)
  const [ty, tm] = after(ny, nm)
  for (const [from, to] of [['15-01-9999', '14-02-9999'], ['15-01-1800', '14-02-1800'], ['15-12-1969', '14-01-1970'], [dmy(ny, nm, 15), dmy(ty, tm, 14)]]) {
    const file = csv(HEADER, '15-01-2026,14-02-2026,Nairobi,180.00,170.00,160.00', `${from},${to},Nairobi,180.00,170.00,160.00`)
    for (const query of ['', '/dry-run']) {
      const res = await app.inject({ method: 'POST', url: `/v1/ingest/csv${query}`, ...formOf(file) })
      t.equal(res.statusCode, 400, `${from}${query}`)
      t.same(res.json(), { detail: `Invalid pricing cycle on line 3: From ${from} To ${to} (a cycle starts from 1970-01-15 to ${latest})`, line: 3 })
    }
  }
  t.same((await app.inject('/v1/towns')).json(), [], 'nothing written')
  const edges = csv(HEADER, '15-01-1970,14-02-1970,Nairobi,80.00,70.00,60.00', `${dmy(y, m, 15)},${dmy(ny, nm, 14)},Nairobi,180.00,170.00,160.00`)
  t.equal((await upload(app, edges)).statusCode, 201, 'the first and the last accepted cycle are stored')
})

function formOf (file: string): { payload: string, headers: Record<string, string> } {
  const boundary = 'windowboundary'
  return {
    payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${file}\r\n--${boundary}--\r\n`,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: 'Bearer test-ingest-token' }
  }
}
