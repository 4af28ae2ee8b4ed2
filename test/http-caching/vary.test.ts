import t from '../support/file-test.js'
import Fastify from 'fastify'
import { addVary } from '../../src/http-caching/vary.js'

/** The Vary a reply ends with, from `initial` (undefined: none) after adding `fields` in order, a call each. */
async function varyAfter (initial: string | string[] | undefined, ...fields: string[]): Promise<string | string[] | undefined> {
  return await varyAfterCalls(initial, fields.map((field) => [field]))
}

/** The same, with one addVary call per list of fields. */
async function varyAfterCalls (initial: string | string[] | undefined, calls: string[][]): Promise<string | string[] | undefined> {
  const app = Fastify()
  app.get('/', async (_request, reply) => {
    if (initial !== undefined) void reply.header('vary', initial)
    for (const fields of calls) addVary(reply, ...fields)
    return 'ok'
  })
  const res = await app.inject('/')
  await app.close()
  return res.headers.vary
}

t.test('addVary keeps what is there, adds a field once, whatever its case', async (t) => {
  t.equal(await varyAfter(undefined, 'Accept'), 'Accept')
  t.equal(await varyAfter('Origin', 'Accept-Encoding'), 'Origin, Accept-Encoding')
  t.equal(await varyAfter('Origin', 'Accept', 'Accept-Encoding'), 'Origin, Accept, Accept-Encoding')
  t.equal(await varyAfter('Origin', 'origin'), 'Origin')
  t.equal(await varyAfter('Origin,accept ,', 'Accept'), 'Origin,accept ,', 'listed: left as written')
  t.equal(await varyAfter('Origin,,X-A', 'X-B'), 'Origin,,X-A, X-B', 'an empty member kept, as recipients ignore it')
  t.equal(await varyAfter('Origin, Accept-Encoding', 'Accept'), 'Origin, Accept-Encoding, Accept', 'a longer name is not the field')
  t.equal(await varyAfter('X-Accept', 'Accept'), 'X-Accept, Accept', 'nor is a name ending with it')
  t.equal(await varyAfter('Origin,\t*', 'Accept'), 'Origin,\t*', 'a star among others')
  t.equal(await varyAfter('Origin, X-*', 'Accept'), 'Origin, X-*, Accept', 'a star inside a name is not one')
  t.equal(await varyAfter(' ', 'Accept'), 'Accept')
  t.equal(await varyAfter('*', 'Accept'), '*')
  t.equal(await varyAfter('', 'Accept'), 'Accept')
  t.strictSame(await varyAfter(['Origin', 'Accept'], 'Accept'), ['Origin', 'Accept'], 'present: left as it is')
  t.equal(await varyAfter(['Origin', 'X-A'], 'X-B'), 'Origin, X-A, X-B')
})

t.test('addVary answers the same on every request, for any number of distinct values', async (t) => {
  for (let i = 0; i < 3; i++) {
    t.equal(await varyAfter('Origin, Accept', 'Accept-Encoding'), 'Origin, Accept, Accept-Encoding', `request ${i + 1}`)
    t.equal(await varyAfter('Origin, Accept', 'accept'), 'Origin, Accept', `request ${i + 1}, present`)
  }
  for (let i = 0; i < 200; i++) t.equal(await varyAfter(`X-${i}`, 'Accept'), `X-${i}, Accept`)
})

t.test('addVary adds several fields in one call, each once', async (t) => {
  t.equal(await varyAfterCalls('Origin', [['Accept', 'Accept-Encoding']]), 'Origin, Accept, Accept-Encoding')
  t.equal(await varyAfterCalls(undefined, [['Accept', 'Accept-Encoding']]), 'Accept, Accept-Encoding')
  t.equal(await varyAfterCalls('Origin, accept-encoding', [['Accept', 'Accept-Encoding']]), 'Origin, accept-encoding, Accept')
  t.equal(await varyAfterCalls('Origin', [['Accept', 'Accept']]), 'Origin, Accept', 'a field given twice is added once')
  t.equal(await varyAfterCalls(undefined, [['Accept', 'accept', 'ACCEPT']]), 'Accept', 'in any case')
  t.equal(await varyAfterCalls('*', [['Accept', 'Accept-Encoding']]), '*')
  t.equal(await varyAfterCalls('Origin', [[]]), 'Origin', 'no field: left as it is')
})
