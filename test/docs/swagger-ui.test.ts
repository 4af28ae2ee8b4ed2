import { mkdirSync, statSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
import { dumpDom, screenshot } from '../browser/chromium.js'
import { build } from '../helper.js'
import { needs } from '../services.js'
import { openApiDocument } from '../support/openapi-document.js'

/**
 * /docs in a real browser: headless Chromium runs Swagger UI's scripts against a listening
 * server, and every operation of openapi.yaml must be on the rendered page. A screenshot is
 * kept for review at .tap/screenshots/docs.png (ignored by git).
 */

const doc = openApiDocument() as {
  paths: Record<string, Record<string, { operationId: string }>>
}
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ method, path, id: op.operationId })))
const SCREENSHOT = fileURLToPath(new URL('../../.tap/screenshots/docs.png', import.meta.url))

t.test('Swagger UI renders every operation of openapi.yaml', await needs('chromium'), async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}/docs`

  const dom = await dumpDom(url, { virtualTimeBudgetMs: 20_000, timeoutMs: 90_000 })
  // t.ok rather than t.match: a failure should not print a 60 kB DOM.
  t.ok(dom.includes('<section class="swagger-ui swagger-container">'), 'Swagger UI mounted')
  t.ok(dom.includes('<h1 class="title">Fuel Price Service<'), 'the document\'s title')
  t.notOk(/Failed to load API definition|Fetch error/.test(dom), 'the definition loaded')
  for (const op of operations) {
    // Each operation block carries its id (displayOperationId) and its method and path.
    const where = `${op.method.toUpperCase()} ${op.path}`
    t.ok(new RegExp(`<div class="opblock opblock-${op.method}" id="operations-[\\w-]+-${op.id}">`).test(dom), `${where}: block ${op.id}`)
    t.ok(dom.includes(`<span class="opblock-summary-operation-id">${op.id}</span>`), `${where}: operation id shown`)
    t.ok(dom.includes(`data-path="${op.path}"`), `${where}: path shown`)
  }
  const blocks = [...dom.matchAll(/class="opblock opblock-(\w+)/g)].map((m) => m[1])
  t.equal(blocks.length, operations.length, 'one block per operation, no more')

  mkdirSync(fileURLToPath(new URL('.', `file://${SCREENSHOT}`)), { recursive: true })
  // a usual host takes about 2 s; a hung try is cut at 30 s and tried once more
  await screenshot(url, SCREENSHOT, { virtualTimeBudgetMs: 20_000, timeoutMs: 30_000 })
  t.ok(statSync(SCREENSHOT).size > 20_000, `screenshot saved to ${SCREENSHOT}`)
})
