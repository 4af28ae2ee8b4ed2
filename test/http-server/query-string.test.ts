import t from '../support/file-test.js'
import { parseQueryString } from '../../src/http-server/query-string.js'

// fast-querystring's result has no prototype: copied to compare its entries only.
const parsed = (query: string): Record<string, unknown> => ({ ...parseQueryString(query) })

t.test('[D21] an empty value is an absent parameter; repeated and encoded values are kept', async (t) => {
  t.strictSame(parsed(''), {})
  t.strictSame(parsed('town=&limit=5'), { limit: '5' })
  t.strictSame(parsed('town=El%20Wak&offset='), { town: 'El Wak' })
  t.strictSame(parsed('town=a&town=b'), { town: ['a', 'b'] })
})
