import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { paced } from '../support/pace.js'
import { ADMIN_HEADERS } from '../../src/admin/admin-page.js'
import { HEADER, TOKEN, csv, storedRows } from '../fixtures/ingest.js'
import { build } from '../helper.js'
import { builtDist } from '../support/dist.js'
import { TOWNS, seedFixture } from '../routes/_fixtures.js'
import { CHROMIUM_PATH, needs } from '../services.js'

/**
 * D55 in a real browser: Debian's Chromium driven by playwright-core (never a downloaded
 * browser). With the page built as `npm start` builds it, an admin reviews a file with a
 * warning and a new town, publishes it, withdraws a cycle, and meets the service's refusals.
 * UPDATE_SCREENSHOT=1 also writes the review's screenshot to docs/admin-review.png.
 */

// The fixture's latest cycle is 2026-10-15, Nairobi's super at 181.05; November's file types
// 1810.50 for it (a warning) and brings a sixth town (Kisumu).
const NOVEMBER = csv(
  HEADER,
  '15-11-2026,14-12-2026,Nairobi,1810.50,171.50,152.00',
  '15-11-2026,14-12-2026,Mombasa,181.40,171.60,152.00',
  '15-11-2026,14-12-2026,Elburgon,181.20,171.70,152.00',
  '15-11-2026,14-12-2026,El Wak,181.60,171.80,152.00',
  "15-11-2026,14-12-2026,Moi's Bridge,181.70,171.90,152.00",
  '15-11-2026,14-12-2026,Kisumu,181.10,171.20,152.00'
)

// The same five towns as October, each a few shillings dearer: nothing to warn about.
const CLEAN = csv(HEADER, ...TOWNS.map((town, i) =>
  `15-11-2026,14-12-2026,${town},${(182.05 + i / 10).toFixed(2)},${(172 + i / 10).toFixed(2)},152.50`))

// Two of the five towns, for the cycle after next when today is 2026-11-20: most towns missing, and early.
const EARLY_AND_SHORT = csv(
  HEADER,
  '15-01-2027,14-02-2027,Nairobi,181.55,171.50,152.00',
  '15-01-2027,14-02-2027,Mombasa,181.65,171.60,152.00'
)

const MALFORMED = csv(
  HEADER,
  '15-11-2026,14-12-2026,Nairobi,181.50,171.50,152.00',
  '15-11-2026,14-12-2026,,181.40,171.60,152.00'
)
const MALFORMED_DETAIL = 'Missing value for Town on line 3'

const shouldRun = await needs('chromium')

let browser: Browser | undefined
let base = ''

/** One built page and one browser for the file; a fresh context (no shared state) per test. The
 * page is built as `npm start` builds it: only when a source changed, one build at a time across
 * the test processes (CI's two lanes run this file at the same moment). */
async function setUp (): Promise<void> {
  await builtDist()
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-gpu'] })
  t.teardown(async () => { await browser?.close() })
}

/** `rateLimitMax`: the D22 allowance per client and minute; unset, one a test never reaches. */
async function service (t: Test, rateLimitMax?: number, today?: string): Promise<FastifyInstance> {
  await seedFixture()
  const app = await build(t, {
    config: { ingestToken: TOKEN, ...(today === undefined ? {} : { now: () => new Date(`${today}T09:00:00+03:00`) }) },
    ...(rateLimitMax === undefined ? {} : { rateLimitMax })
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  return app
}

/** The admin page, open, with every CSP violation or script error failing the test. */
async function openPage (t: Test): Promise<Page> {
  const context = await browser!.newContext({ viewport: { width: 1100, height: 900 } })
  t.teardown(async () => { await context.close() })
  // Playwright's 30 s for each wait, times the host's pace: on a slow host the page's work takes longer.
  context.setDefaultTimeout(paced(30_000))
  const page = await context.newPage()
  page.on('console', (message) => {
    // A refused request is logged by Chromium itself; a CSP violation or a script error is a failure.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) t.fail(`console error: ${message.text()}`)
  })
  page.on('pageerror', (error) => t.fail(`page error: ${error.message}`))
  const response = await page.goto(`${base}/admin`)
  t.equal(response?.status(), 200)
  await page.locator('#cycles tbody tr[data-cycle]').first().waitFor()
  return page
}

async function choose (page: Page, name: string, text: string, token: string): Promise<void> {
  await page.getByLabel('Ingest token').fill(token)
  await page.getByLabel('Choose a CSV file').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) })
}

const statusText = async (page: Page, expected: RegExp): Promise<string> => {
  const status = page.locator('#status')
  await status.filter({ hasText: expected }).waitFor({ timeout: paced(20_000) })
  return await status.innerText()
}

const latest = async (): Promise<Array<{ town: string, valid_from: string, super_petrol: number }>> =>
  await (await fetch(`${base}/v1/prices/latest`)).json() as Array<{ town: string, valid_from: string, super_petrol: number }>

t.test('the admin page in Chromium', shouldRun, async (t) => {
  await setUp()

  t.test('GET /admin and its assets: the strict headers, one script and one stylesheet from this origin', async (t) => {
    await service(t)
    for (const path of ['/admin', '/admin/admin.js', '/admin/admin.css']) {
      const res = await fetch(`${base}${path}`)
      t.equal(res.status, 200, path)
      for (const [name, value] of Object.entries(ADMIN_HEADERS)) t.equal(res.headers.get(name), value, `${path} ${name}`)
    }
    t.match((await fetch(`${base}/admin/admin.js`)).headers.get('content-type'), /^text\/javascript|^application\/javascript/)
    const html = await (await fetch(`${base}/admin`)).text()
    t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
    t.notMatch(html, /\sstyle=/, 'no inline style')
  })

  t.test('review a file with a warning and a new town, cancel, publish it after confirming, see it over HTTP, withdraw it', async (t) => {
    await service(t)
    const page = await openPage(t)
    await choose(page, 'november.csv', NOVEMBER, TOKEN)
    t.equal(await statusText(page, /^Reviewed/), 'Reviewed november.csv: 6 records in 1 cycle(s), 2 warning(s). ' +
    'Check the warnings and missing towns below: publishing asks you to confirm them. Nothing is published yet.')
    t.equal(await page.locator('#status').getAttribute('class'), 'status warning', 'a warning, not a success')

    const review = page.locator('#review-out')
    t.equal(await review.locator('[data-count="records"]').innerText(), '6')
    t.equal(await review.locator('[data-count="inserted"]').innerText(), '6')
    const cycle = review.locator('article[data-cycle="2026-11-15"]')
    t.match(await cycle.locator('h3').innerText(), 'Cycle 2026-11-15 to 2026-12-14')
    t.equal(await cycle.locator('[data-compared]').getAttribute('data-compared'), '2026-10-15')
    t.strictSame(await cycle.locator('[data-towns="new"] li').allInnerTexts(), ['Kisumu'])
    t.strictSame(await cycle.locator('[data-towns="missing"] li').allInnerTexts(), [])
    // Nairobi's super both moved and stands out from the other towns: two warnings, one price.
    const warnings = cycle.locator('table[data-warnings] tbody tr')
    t.equal(await warnings.count(), 2)
    for (const row of await warnings.all()) {
      t.strictSame((await row.locator('td').allInnerTexts()).slice(0, 5), ['2', 'Nairobi', 'Super (PMS)', '181.05', '1810.50'])
    }
    t.match(await warnings.first().locator('td').last().innerText(), /Nairobi on line 2 moves .* from 181\.05 to 1810\.50/)

    // The chart: Nairobi's super marked; the four other towns of both cycles plotted, unmarked.
    const superChart = cycle.locator('figure[data-fuel="super_petrol"] svg')
    t.equal(await superChart.locator('circle[data-warned="true"]').count(), 1)
    t.equal(await superChart.locator('circle[data-warned="true"]').getAttribute('data-town'), 'Nairobi')
    t.equal(await superChart.locator('circle[data-warned="true"]').getAttribute('data-change'), '1629.45')
    t.equal(await superChart.locator('circle[data-warned="false"]').count(), 4, 'Kisumu is new: nothing to compare')
    t.equal(await cycle.locator('figure[data-fuel="diesel"] circle[data-warned="true"]').count(), 0)
    t.match(await superChart.getAttribute('aria-label'), 'warned: Nairobi 181.05 → 1810.50')

    const dir = await mkdtemp(join(tmpdir(), 'admin-shot-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    const shot = join(dir, 'admin-review.png')
    await page.locator('main').screenshot({ path: shot })
    if (process.env.UPDATE_SCREENSHOT === '1') await copyFile(shot, new URL('../../docs/admin-review.png', import.meta.url))

    // Publish asks first, naming the cycle and its warnings; the safe choice has the focus, and
    // cancelling with the keyboard writes nothing.
    const before = await storedRows()
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    const confirm = page.getByRole('dialog', { name: 'Publish with warnings?' })
    t.equal(await confirm.locator('#publish-confirm-text').innerText(), 'Publishing november.csv makes these cycles live at once, as reviewed:')
    t.strictSame(await confirm.locator('li').allInnerTexts(), ['Cycle 2026-11-15 to 2026-12-14: 2 price warning(s).'])
    t.equal(await page.evaluate('document.activeElement?.id'), 'publish-confirm-cancel', 'the safe choice has the focus')
    await page.keyboard.press('Enter')
    t.equal(await statusText(page, /^Nothing/), 'Nothing was published.')
    t.ok(await confirm.isHidden())
    t.equal(await page.evaluate('document.activeElement?.id'), 'publish', 'back on Publish')
    t.strictSame(await storedRows(), before, 'cancelling wrote nothing')

    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByRole('button', { name: 'Publish anyway' }).click()
    t.equal(await statusText(page, /^Published/), 'Published november.csv: 6 records (6 inserted, 0 updated, 0 unchanged).')
    t.equal(await page.locator('#result-out a[data-published]').getAttribute('href'), '/v1/cycles/2026-11-15')
    const rows = await latest()
    t.equal(rows.length, 6)
    t.ok(rows.every((r) => r.valid_from === '2026-11-15'))
    t.equal(rows.find((r) => r.town === 'Nairobi')?.super_petrol, 1810.5)
    t.ok(rows.some((r) => r.town === 'Kisumu'))
    t.equal((await (await fetch(`${base}/v1/cycles/2026-11-15`)).json() as { towns: number }).towns, 6, 'the link answers')

    // Withdraw it with the keyboard alone: the confirmation names the cycle and its row count.
    await page.locator('#cycles tbody tr[data-cycle="2026-11-15"]').waitFor()
    await page.getByRole('button', { name: 'Withdraw the cycle of 2026-11-15' }).focus()
    await page.keyboard.press('Enter')
    const dialog = page.locator('#confirm')
    t.match(await dialog.locator('#confirm-text').innerText(), 'Withdraw the cycle 2026-11-15 to 2026-12-14? Its 6 records')
    t.equal(await page.evaluate('document.activeElement?.id'), 'confirm-cancel', 'the safe choice has the focus')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    t.match(await statusText(page, /^Withdrew/), 'Withdrew the cycle 2026-11-15 to 2026-12-14: 6 records removed.')
    t.ok((await latest()).every((r) => r.valid_from === '2026-10-15'), 'latest is October again')
    await page.locator('#cycles tbody tr[data-cycle="2026-11-15"]').waitFor({ state: 'detached' })
  })

  t.test('a 70-cycle backfill: one dry run, every cycle reviewed, published, no per-cycle request and no 429 at the production allowance', async (t) => {
    await service(t, 60) // D22: 60 requests a minute per client, as in production
    const page = await openPage(t)
    const requests: string[] = []
    const statuses: number[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.origin === base && !url.pathname.startsWith('/admin')) requests.push(`${request.method()} ${url.pathname}${url.search}`)
    })
    page.on('response', (response) => { if (response.url().startsWith(base)) statuses.push(response.status()) })
    // 70 cycles from 2020-10-15 to 2026-07-15 (before the fixture's), 80 towns each; in the
    // cycle of 2021-03-15 (the sixth) Town 07's super is typed 1505.70 for 150.57: two warnings there,
    // and one in the next cycle, where it comes back.
    const towns = Array.from({ length: 80 }, (_, i) => `Town ${String(i).padStart(2, '0')}`)
    const lines = [HEADER]
    for (let c = 69; c >= 0; c--) {
      const month = 2026 * 12 + 6 - c // July 2026 is c = 0
      const date = (m: number, day: number): string => `${day}-${String((m % 12) + 1).padStart(2, '0')}-${Math.floor(m / 12)}`
      towns.forEach((town, i) => {
        const superPetrol = (150 + (69 - c) / 10 + i / 100).toFixed(2)
        lines.push(`${date(month, 15)},${date(month + 1, 14)},${town},${c === 64 && i === 7 ? (Number(superPetrol) * 10).toFixed(2) : superPetrol},160.00,140.00`)
      })
    }
    const file = csv(...lines)
    await choose(page, 'backfill.csv', file, TOKEN)
    t.equal(await statusText(page, /^Reviewed/), 'Reviewed backfill.csv: 5600 records in 70 cycle(s), 3 warning(s). ' +
    'Check the warnings and missing towns below: publishing asks you to confirm them. Nothing is published yet.')
    const review = page.locator('#review-out')
    t.equal(await review.locator('article[data-cycle]').count(), 70)
    t.equal(await review.locator('[data-count="inserted"]').innerText(), '5600')
    // The dry run charts 5,000 towns' prices, newest cycle first: 62 whole cycles, half of the 63rd.
    const charted = async (validFrom: string): Promise<number> => await review.locator(`article[data-cycle="${validFrom}"] figure[data-fuel="diesel"] circle`).count()
    t.strictSame([await charted('2026-07-15'), await charted('2021-06-15'), await charted('2021-05-15'), await charted('2021-04-15'), await charted('2020-10-15')], [80, 80, 40, 0, 0])
    t.equal(await review.locator('article[data-cycle="2021-05-15"] [data-not-charted]').getAttribute('data-not-charted'), '40')
    t.equal(await review.locator('article[data-cycle="2021-04-15"] [data-not-charted]').getAttribute('data-not-charted'), '80')
    // The typo's cycle is not charted, yet its warnings carry both prices.
    const typo = review.locator('article[data-cycle="2021-03-15"] table[data-warnings] tbody tr')
    t.equal(await typo.count(), 2)
    t.strictSame((await typo.first().locator('td').allInnerTexts()).slice(0, 5), [String(2 + 5 * 80 + 7), 'Town 07', 'Super (PMS)', '150.47', '1505.70'])

    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    t.strictSame(await page.locator('#publish-confirm-list li').allInnerTexts(),
      ['Cycle 2021-04-15 to 2021-05-14: 1 price warning(s).', 'Cycle 2021-03-15 to 2021-04-14: 2 price warning(s).'], 'newest first, as reviewed')
    await page.getByRole('button', { name: 'Publish anyway' }).click()
    t.match(await statusText(page, /^Published/), 'Published backfill.csv: 5600 records (5600 inserted, 0 updated, 0 unchanged).')
    t.equal(await page.locator('#result-out a[data-published]').count(), 70)
    t.equal((await storedRows()).length, 15 + 5600)
    await page.locator('#cycles tbody tr[data-cycle="2026-07-15"]').waitFor()
    // After the page's first list of cycles: the dry run, the upload, the list again.
    t.strictSame(requests, ['POST /v1/ingest/csv/dry-run', 'POST /v1/ingest/csv', 'GET /v1/cycles?limit=12'], 'one request per step, none per cycle')
    t.strictSame(statuses.filter((s) => s >= 400), [], 'no refusal, no 429')
  })

  t.test('a clean file publishes with one click: no warning banner, no question', async (t) => {
    await service(t)
    const page = await openPage(t)
    await choose(page, 'clean.csv', CLEAN, TOKEN)
    t.equal(await statusText(page, /^Reviewed/), 'Reviewed clean.csv: 5 records in 1 cycle(s), 0 warning(s). Nothing is published yet.')
    t.equal(await page.locator('#status').getAttribute('class'), 'status done')
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    t.equal(await statusText(page, /^Published/), 'Published clean.csv: 5 records (5 inserted, 0 updated, 0 unchanged).')
    t.ok(await page.locator('#publish-confirm').isHidden(), 'never asked')
    const rows = await latest()
    t.strictSame(rows.map((r) => [r.town, r.valid_from, r.super_petrol]).sort(), [
      ['El Wak', '2026-11-15', 182.35], ['Elburgon', '2026-11-15', 182.25], ['Moi\'s Bridge', '2026-11-15', 182.45],
      ['Mombasa', '2026-11-15', 182.15], ['Nairobi', '2026-11-15', 182.05]
    ])
  })

  t.test('a short file for the cycle after next: both cycle warnings shown, the question names the missing towns, Escape writes nothing', async (t) => {
    await service(t, undefined, '2026-11-20')
    const before = await storedRows()
    const page = await openPage(t)
    await choose(page, 'early.csv', EARLY_AND_SHORT, TOKEN)
    await statusText(page, /^Reviewed/)
    t.equal(await page.locator('#status').getAttribute('class'), 'status warning')
    const cycle = page.locator('article[data-cycle="2027-01-15"]')
    t.strictSame(await cycle.locator('ul.cycle-warnings li').evaluateAll((items) => items.map((li) => li.getAttribute('data-kind'))), ['missing_towns', 'early'])
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    const items = await page.locator('#publish-confirm-list li').allInnerTexts()
    t.equal(items.length, 1)
    t.match(items[0], /^Cycle 2027-01-15 to 2027-02-14: 3 missing town\(s\): El Wak, Elburgon, Moi's Bridge; /)
    t.match(items[0], await cycle.locator('ul.cycle-warnings li[data-kind="early"]').innerText(), 'the early warning, in the service\'s words')
    await page.keyboard.press('Escape')
    t.equal(await statusText(page, /^Nothing/), 'Nothing was published.')
    t.strictSame(await storedRows(), before, 'nothing written')
  })

  t.test('a malformed file shows the service\'s 400 line, and nothing is written', async (t) => {
    await service(t)
    const before = await storedRows()
    const page = await openPage(t)
    await choose(page, 'broken.csv', MALFORMED, TOKEN)
    const status = await statusText(page, /refused/)
    t.equal(status, `The file was refused, nothing was written: ${MALFORMED_DETAIL}`)
    t.ok(await page.locator('#review-section').isHidden(), 'no review, no Publish')
    t.strictSame(await storedRows(), before)
  })

  t.test('a refused cell shows where it is and how to fix it, as the service says', async (t) => {
    await service(t)
    const file = csv(HEADER, '15-11-2026,14-12-2026,Nairobi,"181,50",171.50,152.00')
    const data = new FormData()
    data.append('file', new Blob([file], { type: 'text/csv' }), 'comma.csv')
    const answer = await fetch(`${base}/v1/ingest/csv/dry-run`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: data })
    t.equal(answer.status, 400)
    const body = await answer.json() as { detail: string, line: number, column: string, problem: string, hint: string }
    t.strictSame([body.detail, body.line, body.column, body.problem], ['Invalid price value: 181,50', 2, 'Super (PMS)', 'comma_decimal'])
    const page = await openPage(t)
    await choose(page, 'comma.csv', file, TOKEN)
    t.equal(await statusText(page, /refused/), `The file was refused, nothing was written: Invalid price value: 181,50 (line 2, column Super (PMS)) ${body.hint}`)
  })

  t.test('a wrong token is shown as a token problem, and nothing is written', async (t) => {
    await service(t)
    const before = await storedRows()
    const page = await openPage(t)
    await choose(page, 'november.csv', NOVEMBER, 'not-the-token')
    t.match(await statusText(page, /^Token problem/), 'Token problem: the service did not accept the ingest token (Invalid authorization token for ingestion endpoint.)')
    t.ok(await page.locator('#review-section').isHidden())
    // The token stays in page memory only.
    t.strictSame(await page.evaluate("[localStorage.length, sessionStorage.length, document.cookie, location.href.includes('not-the-token')]"), [0, 0, '', false])
    t.strictSame(await storedRows(), before)
  })
})
