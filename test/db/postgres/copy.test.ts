import { Writable } from 'node:stream'
import t from '../../support/file-test.js'
import { copyBatches, transactionClientOf } from '../../../src/db/postgres/copy.js'
import { packRows, type PriceRow } from '../../../src/domain/price-rows.js'

// The COPY path itself is tested on PostgreSQL, in test/postgres/copy.test.ts.
const row = (town: string, superPetrol = '180.00'): PriceRow => ({
  line: 2, town, validFrom: '2026-01-15', validTo: '2026-02-14', superPetrol, diesel: '170.00', kerosene: '150.00'
})

t.test('changed internals are reported, not worked around', async (t) => {
  t.throws(() => transactionClientOf({}), { message: 'drizzle-orm internals changed: a postgres-js transaction has no session.client (COPY needs it)' })
  const withoutReject = Object.assign(() => {}, { unsafe: () => ({ writable: async () => { throw new Error('not reached') } }) })
  await t.rejects(copyBatches(withoutReject as never, [packRows([row('Nairobi')])]), {
    message: 'postgres.js internals changed: a query has no reject callback (a refused COPY would hang)'
  })
  const plainStream = Object.assign(() => {}, { unsafe: () => ({ reject: () => {}, writable: async () => new Writable({ write: (_c, _e, done) => { done() } }) }) })
  await t.rejects(copyBatches(plainStream as never, [packRows([row('Nairobi')])]), {
    message: 'postgres.js internals changed: a COPY stream has no _write, _final and _destroy'
  })
})
