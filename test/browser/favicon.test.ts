import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import t from '../support/file-test.js'
import { FAVICON_PATH } from '../../src/admin/admin-page.js'
import { TOKEN } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { builtDist } from '../support/dist.js'
import { CHROMIUM_PATH, needs } from '../services.js'
import { paced } from '../support/pace.js'

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
  await builtDist() // the page as npm start builds it, one build at a time across test processes
  const app = await build(t, { config: { ingestToken: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-gpu'] })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage()
  page.setDefaultTimeout(paced(30_000)) // Playwright's own default, grown on a slow host
  const errors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  t.equal((await page.goto(`${base}/admin`))?.status(), 200)
  await page.locator('#cycles').waitFor()
  // Headless Chromium does not always ask for the icon itself; the page's own origin asks for it as a tab would.
  t.equal(await page.evaluate(async (path) => (await fetch(path)).status, FAVICON_PATH), 204, 'the icon is answered 204')
  t.same(errors, [], 'no error in the console')
})
