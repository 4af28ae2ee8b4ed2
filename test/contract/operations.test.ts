import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { operations } from '../../src/generated/openapi.js'
import { build } from '../helper.js'

const doc = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string }>>
}

t.test('every operation of openapi.yaml has a route, and every /v1 route an operation', async (t) => {
  const app = await build(t)
  const routes = new Set<string>()
  app.addHook('onRoute', () => {})
  const printed = app.printRoutes({ commonPrefix: false, includeHooks: false })
  const fromDoc = new Set<string>()
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) {
      fromDoc.add(`${method.toUpperCase()} ${path}`)
      t.ok(app.hasRoute({ method: method.toUpperCase() as 'GET', url: path }), `${method.toUpperCase()} ${path} (${item[method]?.operationId}) has a route`)
    }
  }
  // Every registered /v1 route (HEAD is Fastify's automatic twin of GET) is in the document.
  // printRoutes nests a route under another that is its prefix (`/v1/prices` → `└── /latest`),
  // so full paths are rebuilt from the indentation, four characters a level.
  const parents: string[] = []
  for (const line of printed.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line)
    if (m === null) continue
    const depth = (m[1] as string).length / 4
    const path = (parents[depth - 1] ?? '') + (m[2] as string)
    parents.length = depth
    parents.push(path)
    if (m[3] === undefined || !path.startsWith('/v1/')) continue
    for (const method of m[3].split(', ')) if (method !== 'HEAD') routes.add(`${method} ${path}`)
  }
  t.same([...routes].sort(), [...fromDoc].sort())
  t.same(Object.keys(operations).sort(), Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)).sort())
})
