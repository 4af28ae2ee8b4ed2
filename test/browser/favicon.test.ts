import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import t from 'tap'
import { buildAdminPage } from '../../scripts/build-admin-page.js'
import { FAVICON_PATH } from '../../src/admin/admin-page.js'
import { TOKEN } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { CHROMIUM_PATH, needs } from '../services.js'

/** Issue 46: the admin page's console stays clean, the browser's own request for an icon included. */

const shouldRun = await needs('chromium')

t.test('/favicon.ico answers 204 with no body, kept a week, for GET and HEAD', async (t) => {
  const app = await build(t)
  for (const method of ['GET', 'HEAD'] as const) {
    const res = await app.inject({ method, url: FAVICON_PATH })
    t.equal(res.statusCode, 204, method)
    t.equal(res.body, '', method)
    t.equal(res.headers['cache-control'], 'public, max-age=604800', method)
  }
})

t.test('opening /admin in Chromium logs no error: the icon it asks for is answered', shouldRun, async (t) => {
  await buildAdminPage()
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-gpu'] })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage()
  const errors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  const icon = page.waitForResponse((response) => new URL(response.url()).pathname === FAVICON_PATH, { timeout: 10_000 })
  t.equal((await page.goto(`${base}/admin`))?.status(), 200)
  t.equal((await icon).status(), 204, 'the browser asked for the icon and got 204')
  await page.locator('#cycles').waitFor()
  t.same(errors, [], 'no error in the console')
})
