import t from '../support/file-test.js'
import { cycleFrom, cycleOf, isCalendarDate, isCycle } from '../../src/domain/cycle.js'

t.test('[spec 2 r3] day >= 15 starts the cycle on the 15th of the same month', async (t) => {
  t.same(cycleOf('2026-11-15'), { validFrom: '2026-11-15', validTo: '2026-12-14' })
  t.same(cycleOf('2026-11-30'), { validFrom: '2026-11-15', validTo: '2026-12-14' })
})

t.test('[spec 2 r3] day < 15 belongs to the cycle that started the previous month', async (t) => {
  t.same(cycleOf('2026-11-14'), { validFrom: '2026-10-15', validTo: '2026-11-14' })
  t.same(cycleOf('2026-11-01'), { validFrom: '2026-10-15', validTo: '2026-11-14' })
})

t.test('[spec 2 r3] cycles cross year boundaries both ways', async (t) => {
  t.same(cycleOf('2026-12-20'), { validFrom: '2026-12-15', validTo: '2027-01-14' })
  t.same(cycleOf('2027-01-03'), { validFrom: '2026-12-15', validTo: '2027-01-14' })
})

t.test('[D8] cycleFrom only accepts the 15th; isCycle needs the 14th of the next month', async (t) => {
  t.equal(cycleFrom('2026-02-14'), null)
  t.same(cycleFrom('2026-01-15'), { validFrom: '2026-01-15', validTo: '2026-02-14' })
  t.equal(isCycle('2026-01-15', '2026-02-14'), true)
  t.equal(isCycle('2026-01-15', '2026-02-15'), false)
  t.equal(isCycle('2026-01-16', '2026-02-14'), false)
  t.equal(isCycle('2026-12-15', '2027-01-14'), true)
})

t.test('isCalendarDate rejects impossible dates', async (t) => {
  t.equal(isCalendarDate(2026, 2, 31), false)
  t.equal(isCalendarDate(2028, 2, 29), true)
  t.equal(isCalendarDate(2026, 2, 29), false)
  t.equal(isCalendarDate(2026, 13, 1), false)
  t.equal(isCalendarDate(2026, 0, 1), false)
  t.equal(isCalendarDate(2026, 4, 30), true)
})
