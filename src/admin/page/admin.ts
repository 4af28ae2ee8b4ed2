/** The admin page: dry run, publish, withdraw (D55); bodies typed from openapi.yaml, so contract breaks fail typecheck. */
// The token lives only in this module's memory, never in storage, a cookie or the URL.
import type { components, paths } from '../../generated/admin-api.js'

type Schemas = components['schemas']
type DryRun = paths['/v1/ingest/csv/dry-run']['post']['responses'][200]['content']['application/json']
type DryRunCycle = Schemas['DryRunCycle']
type Ingested = paths['/v1/ingest/csv']['post']['responses'][201]['content']['application/json']
type Cycles = paths['/v1/cycles']['get']['responses'][200]['content']['application/json']
type Withdrawn = paths['/v1/cycles/{valid_from}']['delete']['responses'][200]['content']['application/json']
type Fuel = Schemas['PriceWarning']['fuel']
type Rejection = Schemas['CsvRejection'] | Schemas['ValidationError']
type ApiPath = keyof paths

const FUELS: ReadonlyArray<{ fuel: Fuel, name: string }> = [
  { fuel: 'super_petrol', name: 'Super (PMS)' },
  { fuel: 'diesel', name: 'Diesel (AGO)' },
  { fuel: 'kerosene', name: 'Kerosene (IK)' }
]

const DRY_RUN: ApiPath = '/v1/ingest/csv/dry-run'
const INGEST: ApiPath = '/v1/ingest/csv'
const CYCLES: ApiPath = '/v1/cycles'
const CYCLE: ApiPath = '/v1/cycles/{valid_from}'
const cyclePath = (validFrom: string): string => CYCLE.replace('{valid_from}', encodeURIComponent(validFrom))

const $ = <T extends HTMLElement>(id: string): T => {
  const element = document.getElementById(id)
  if (element === null) throw new Error(`#${id} is missing from the page`)
  return element as T
}

const ui = {
  status: $('status'),
  token: $<HTMLInputElement>('token'),
  file: $<HTMLInputElement>('file'),
  drop: $('drop'),
  review: $<HTMLButtonElement>('review'),
  reviewSection: $('review-section'),
  reviewOut: $('review-out'),
  publish: $<HTMLButtonElement>('publish'),
  resultSection: $('result-section'),
  resultOut: $('result-out'),
  refresh: $<HTMLButtonElement>('refresh'),
  cycles: $<HTMLTableElement>('cycles'),
  confirm: $<HTMLDialogElement>('confirm'),
  confirmText: $('confirm-text'),
  confirmOk: $<HTMLButtonElement>('confirm-ok'),
  confirmCancel: $<HTMLButtonElement>('confirm-cancel'),
  publishConfirm: $<HTMLDialogElement>('publish-confirm'),
  publishConfirmText: $('publish-confirm-text'),
  publishConfirmList: $('publish-confirm-list'),
  publishConfirmOk: $<HTMLButtonElement>('publish-confirm-ok'),
  publishConfirmCancel: $<HTMLButtonElement>('publish-confirm-cancel')
}

let chosen: File | undefined
/** What the last review found that an admin should see before publishing; empty for a clean file. */
let concerns: string[] = []

// ---- Talking to the API ------------------------------------------------------------------

/** A refusal in the service's words, ready for the status line. */
class Refused extends Error {}

type Action = 'review' | 'publish' | 'withdraw' | 'read'

async function call<T> (method: 'GET' | 'POST' | 'DELETE', url: string, action: Action, body?: FormData): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const token = ui.token.value.trim()
  if (action !== 'read' && token !== '') headers.authorization = `Bearer ${token}`
  let response: Response
  try {
    // no-cache: the reads are publicly cacheable, and the page must see its own writes.
    response = await fetch(url, { method, headers, body: body ?? null, cache: 'no-cache', credentials: 'omit' })
  } catch (err) {
    throw new Refused(`Could not reach the service (${err instanceof Error ? err.message : String(err)}).`)
  }
  if (response.ok) return await response.json() as T
  throw new Refused(await refusal(response, action))
}

/** The service's own words for a refusal: `detail`, with where the fault is and how to fix it. */
async function refusal (response: Response, action: Action): Promise<string> {
  let detail = ''
  try {
    const body = await response.json() as Rejection
    if (typeof body.detail !== 'string') {
      detail = body.detail.map((item) => `${item.loc.join('.')}: ${item.msg}`).join('; ')
    } else {
      detail = body.detail
      // Where the fault is, unless the sentence already says it, then what to change.
      const rejection = body as Schemas['CsvRejection']
      const place: string[] = []
      if (rejection.line !== undefined && !/\bline\b/i.test(detail)) place.push(`line ${rejection.line}`)
      if (rejection.column !== undefined && !detail.includes(rejection.column)) place.push(`column ${rejection.column}`)
      if (place.length > 0) detail += ` (${place.join(', ')})`
      if (rejection.hint !== undefined) detail += ` ${rejection.hint}`
    }
  } catch {
    detail = response.statusText
  }
  switch (response.status) {
    case 400: return `The file was refused, nothing was written: ${detail}`
    case 401: return `Token problem: the service did not accept the ingest token (${detail}) Check the token and try again.`
    case 404: return `Not found: ${detail}`
    case 413: return `The file is too large: ${detail}`
    case 415: return `Not a CSV file: ${detail}`
    case 503: {
      const wait = response.headers.get('retry-after')
      return `The service is busy: ${detail}${wait === null ? '' : ` Wait ${wait} s before trying again.`}`
    }
    case 429: {
      const wait = response.headers.get('retry-after')
      return `Too many requests: ${detail}${wait === null ? '' : ` Wait ${wait} s before trying again.`}`
    }
    default: return `The service could not ${action === 'read' ? 'answer' : action} (HTTP ${response.status}): ${detail}`
  }
}

function say (message: string, tone: 'busy' | 'done' | 'warning' | 'error' = 'busy'): void {
  ui.status.textContent = message
  ui.status.className = `status ${tone === 'busy' ? '' : tone}`.trim()
}

function form (file: File): FormData {
  const data = new FormData()
  data.append('file', file, file.name)
  return data
}

// ---- Rendering ---------------------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap> (tag: K, text?: string, attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value)
  return node
}

const SVG_NS = 'http://www.w3.org/2000/svg'
function svg (tag: string, attrs: Record<string, string | number> = {}, text?: string): SVGElement {
  const node = document.createElementNS(SVG_NS, tag)
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value))
  if (text !== undefined) node.textContent = text
  return node
}

const money = (x: number): string => x.toFixed(2)
const signed = (x: number): string => (x > 0 ? '+' : x < 0 ? '−' : '±') + Math.abs(x).toFixed(2)

function counts (review: DryRun): HTMLElement {
  const list = el('dl', undefined, { class: 'counts' })
  for (const [name, value] of [['Records', review.records_processed], ['Inserted', review.inserted], ['Updated', review.updated], ['Unchanged', review.unchanged]] as const) {
    list.append(el('dt', name), el('dd', String(value), { 'data-count': name.toLowerCase() }))
  }
  return list
}

function townList (title: string, towns: string[], notListed: number, kind: string): HTMLElement {
  const block = el('div', undefined, { 'data-towns': kind })
  block.append(el('h4', `${title} (${towns.length + notListed})`))
  if (towns.length + notListed === 0) {
    block.append(el('p', 'None.', { class: 'hint' }))
    return block
  }
  const list = el('ul', undefined, { class: 'towns' })
  for (const town of towns) list.append(el('li', town))
  block.append(list)
  if (notListed > 0) block.append(el('p', `${notListed} more not listed: one review lists at most 1,000.`, { class: 'hint', 'data-not-listed': String(notListed) }))
  return block
}

interface Point { town: string, change: number, previous: number, price: number, warned: boolean }

/** Every town's change on one axis, warned towns larger and named, so a typo (2140.00 for 214.00) stands out. */
function strip (fuel: { fuel: Fuel, name: string }, points: Point[], unplotted: string[], notCharted: number): HTMLElement {
  const figure = el('figure', undefined, { 'data-fuel': fuel.fuel })
  const width = 720
  const height = 96
  const left = 16
  const right = width - 16
  const changes = points.map((p) => p.change)
  const low = Math.min(0, ...changes)
  const high = Math.max(0, ...changes)
  const span = high - low === 0 ? 1 : high - low
  const x = (v: number): number => left + (v - low) / span * (right - left)
  const warned = points.filter((p) => p.warned)
  const title = `${fuel.name}: change per town against the previous cycle`
  const summary = points.length === 0
    ? (notCharted > 0 ? 'Not charted: this review has charted as many towns as it lists.' : 'No town of this cycle has a price in the previous cycle.')
    : `${points.length} towns, from ${signed(Math.min(...changes))} to ${signed(Math.max(...changes))} KSh` +
      (warned.length === 0 ? '; no warnings.' : `; warned: ${warned.map((p) => `${p.town} ${money(p.previous)} → ${money(p.price)}`).join(', ')}.`)
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'strip', role: 'img', 'aria-label': `${title}. ${summary}` })
  chart.append(svg('line', { class: 'axis', x1: left, x2: right, y1: 60, y2: 60 }))
  chart.append(svg('line', { class: 'zero', x1: x(0), x2: x(0), y1: 8, y2: 66 }))
  chart.append(svg('text', { x: left, y: 82 }, signed(low)), svg('text', { x: right, y: 82, 'text-anchor': 'end' }, signed(high)))
  if (x(0) - left > 60 && right - x(0) > 60) chart.append(svg('text', { x: x(0), y: 82, 'text-anchor': 'middle' }, '0'))
  // Ordinary towns first, warned ones on top; a small vertical spread keeps equal changes visible.
  const ordered = [...points.filter((p) => !p.warned), ...warned]
  ordered.forEach((p, i) => {
    const dot = svg('circle', {
      class: p.warned ? 'dot warned' : 'dot',
      cx: x(p.change).toFixed(1),
      cy: p.warned ? 30 : 44 + (i % 5) * 3,
      r: p.warned ? 6 : 3.5,
      'data-town': p.town,
      'data-change': p.change.toFixed(2),
      'data-warned': String(p.warned)
    })
    dot.append(svg('title', {}, `${p.town}: ${money(p.previous)} → ${money(p.price)} (${signed(p.change)})${p.warned ? ', warned' : ''}`))
    chart.append(dot)
    if (p.warned) chart.append(svg('text', { class: 'label', x: x(p.change).toFixed(1), y: 18, 'text-anchor': p.change > (low + high) / 2 ? 'end' : 'start' }, p.town))
  })
  figure.append(chart)
  const caption = el('figcaption', `${title}. ${summary}`)
  if (unplotted.length > 0) caption.append(` Not plotted (no price in the previous cycle): ${unplotted.join(', ')}.`)
  figure.append(caption)
  return figure
}

/** A cycle's price warnings, listed or not. */
const priceWarnings = (cycle: DryRunCycle): number => cycle.warnings.length + cycle.warnings_not_listed

function renderCycle (cycle: DryRunCycle): HTMLElement {
  const block = el('article', undefined, { 'data-cycle': cycle.valid_from })
  block.append(el('h3', `Cycle ${cycle.valid_from} to ${cycle.valid_to}`))
  block.append(el('p', cycle.previous_valid_from === null
    ? 'Compared with: no earlier cycle (nothing is new or missing).'
    : `Compared with: the cycle of ${cycle.previous_valid_from}.`, { 'data-compared': cycle.previous_valid_from ?? '' }))
  if (cycle.cycle_warnings.length > 0) {
    const list = el('ul', undefined, { class: 'cycle-warnings', 'data-cycle-warnings': cycle.valid_from })
    for (const w of cycle.cycle_warnings) list.append(el('li', w.detail, { 'data-kind': w.kind }))
    block.append(list)
  }
  block.append(townList('New towns', cycle.new_towns, cycle.new_towns_not_listed, 'new'),
    townList('Missing towns', cycle.missing_towns, cycle.missing_towns_not_listed, 'missing'))

  block.append(el('h4', `Warnings (${priceWarnings(cycle)})`))
  if (priceWarnings(cycle) === 0) {
    block.append(el('p', 'None: no price moved or stands out beyond the warning share.', { class: 'hint' }))
  } else {
    const table = el('table', undefined, { 'data-warnings': cycle.valid_from })
    const head = el('tr')
    for (const name of ['Line', 'Town', 'Fuel', 'Old price', 'New price', 'Warning']) head.append(el('th', name, { scope: 'col' }))
    table.append(el('thead'), el('tbody'))
    table.tHead?.append(head)
    for (const w of cycle.warnings) {
      const fuel = FUELS.find((f) => f.fuel === w.fuel)?.name ?? w.fuel
      const row = el('tr', undefined, { 'data-town': w.town, 'data-fuel': w.fuel })
      row.append(el('td', String(w.line), { class: 'num' }), el('td', w.town), el('td', fuel),
        el('td', w.previous === null ? '—' : money(w.previous), { class: 'num' }), el('td', money(w.price), { class: 'num' }),
        el('td', w.detail))
      table.tBodies[0]?.append(row)
    }
    if (cycle.warnings.length > 0) block.append(table)
    if (cycle.warnings_not_listed > 0) block.append(el('p', `${cycle.warnings_not_listed} more warnings are not listed.`, { class: 'hint' }))
  }

  // The towns of the file that the previous cycle also has, with both prices, as the dry run sent them.
  const warned = new Set(cycle.warnings.map((w) => `${w.fuel}|${w.town}`))
  if (cycle.changes_not_listed > 0) {
    block.append(el('p', `${cycle.changes_not_listed} more towns are not charted: one review charts at most 5,000.`, { class: 'hint', 'data-not-charted': String(cycle.changes_not_listed) }))
  }
  for (const fuel of FUELS) {
    const points: Point[] = cycle.changes.map((c) => {
      const previous = c.previous[fuel.fuel]
      const price = c.price[fuel.fuel]
      return { town: c.town, previous, price, change: Math.round((price - previous) * 100) / 100, warned: warned.has(`${fuel.fuel}|${c.town}`) }
    })
    const unplotted = cycle.warnings.filter((w) => w.fuel === fuel.fuel && w.previous === null).map((w) => w.town)
    block.append(strip(fuel, points, [...new Set(unplotted)], cycle.changes_not_listed))
  }
  return block
}

// ---- The flow ----------------------------------------------------------------------------

async function review (): Promise<void> {
  const file = chosen
  if (file === undefined) return
  ui.review.disabled = true
  ui.publish.disabled = true
  concerns = []
  ui.reviewSection.hidden = true
  ui.resultSection.hidden = true
  say(`Checking ${file.name} (dry run: nothing is written)…`)
  try {
    const result = await call<DryRun>('POST', DRY_RUN, 'review', form(file))
    const parts: HTMLElement[] = [el('p', `${file.name}: what publishing it would do.`), counts(result)]
    for (const cycle of result.cycles) parts.push(renderCycle(cycle))
    ui.reviewOut.replaceChildren(...parts)
    ui.reviewSection.hidden = false
    ui.publish.disabled = false
    const warnings = result.cycles.reduce((n, c) => n + priceWarnings(c) + c.cycle_warnings.length, 0)
    concerns = result.cycles.flatMap(concern)
    const summary = `Reviewed ${file.name}: ${result.records_processed} records in ${result.cycles.length} cycle(s), ${warnings} warning(s).`
    if (concerns.length === 0) say(`${summary} Nothing is published yet.`, 'done')
    else say(`${summary} Check the warnings and missing towns below: publishing asks you to confirm them. Nothing is published yet.`, 'warning')
  } catch (err) {
    say(err instanceof Refused ? err.message : `The review failed: ${String(err)}`, 'error')
  } finally {
    ui.review.disabled = false
  }
}

/** One line for a cycle with warnings or missing towns, naming what would go live; none for a clean cycle. */
function concern (cycle: DryRunCycle): string[] {
  const parts: string[] = []
  const warnings = priceWarnings(cycle)
  if (warnings > 0) parts.push(`${warnings} price warning(s)`)
  const missing = cycle.missing_towns.length + cycle.missing_towns_not_listed
  if (missing > 0) {
    const named = cycle.missing_towns.slice(0, 10).join(', ')
    parts.push(`${missing} missing town(s): ${named}${missing > 10 ? ` and ${missing - 10} more` : ''}`)
  }
  for (const w of cycle.cycle_warnings) if (w.kind === 'early') parts.push(w.detail)
  return parts.length === 0 ? [] : [`Cycle ${cycle.valid_from} to ${cycle.valid_to}: ${parts.join('; ')}.`]
}

/** Publish at once when the review found nothing; otherwise ask first, naming what would go live. */
function askToPublish (): void {
  const file = chosen
  if (file === undefined) return
  if (concerns.length === 0) {
    void publish()
    return
  }
  ui.publishConfirmText.textContent = `Publishing ${file.name} makes these cycles live at once, as reviewed:`
  ui.publishConfirmList.replaceChildren(...concerns.map((line) => el('li', line)))
  ui.publishConfirm.showModal()
  ui.publishConfirmCancel.focus() // the safe choice has the focus
}

async function publish (): Promise<void> {
  const file = chosen
  if (file === undefined) return
  ui.publish.disabled = true
  say(`Publishing ${file.name}…`)
  try {
    const result = await call<Ingested>('POST', INGEST, 'publish', form(file))
    const published = [...ui.reviewOut.querySelectorAll<HTMLElement>('[data-cycle]')].map((node) => node.dataset.cycle ?? '')
    const list = el('dl', undefined, { class: 'counts' })
    for (const [name, value] of [['Records processed', result.records_processed], ['Inserted', result.inserted], ['Updated', result.updated], ['Unchanged', result.unchanged]] as const) {
      list.append(el('dt', name), el('dd', String(value), { 'data-count': name.split(' ')[0]!.toLowerCase() }))
    }
    const links = el('p', 'Published: ')
    published.forEach((validFrom, i) => {
      if (i > 0) links.append(', ')
      links.append(el('a', `the cycle of ${validFrom}`, { href: cyclePath(validFrom), 'data-published': validFrom }))
    })
    ui.resultOut.replaceChildren(el('p', `At ${result.timestamp}.`), list, links)
    ui.resultSection.hidden = false
    ui.reviewSection.hidden = true
    say(`Published ${file.name}: ${result.records_processed} records (${result.inserted} inserted, ${result.updated} updated, ${result.unchanged} unchanged).`, 'done')
    await listCycles()
  } catch (err) {
    ui.publish.disabled = false
    say(err instanceof Refused ? err.message : `Publishing failed: ${String(err)}`, 'error')
  }
}

async function listCycles (): Promise<void> {
  const body = ui.cycles.tBodies[0]
  if (body === undefined) return
  try {
    const cycles = await call<Cycles>('GET', `${CYCLES}?limit=12`, 'read')
    body.replaceChildren(...cycles.map((cycle) => {
      const row = el('tr', undefined, { 'data-cycle': cycle.valid_from })
      const link = el('a', `${cycle.valid_from} to ${cycle.valid_to}`, { href: cyclePath(cycle.valid_from) })
      const cell = el('td')
      cell.append(link)
      const withdraw = el('button', 'Withdraw', { type: 'button', 'aria-label': `Withdraw the cycle of ${cycle.valid_from}` })
      withdraw.addEventListener('click', () => confirmWithdraw(cycle.valid_from, cycle.valid_to, cycle.towns, withdraw))
      const action = el('td')
      action.append(withdraw)
      row.append(cell, el('td', String(cycle.towns), { class: 'num' }), el('td', cycle.published_at ?? 'before it was recorded'), action)
      return row
    }))
    if (cycles.length === 0) {
      const empty = el('tr')
      empty.append(el('td', 'No cycle is stored yet.', { colspan: '4' }))
      body.replaceChildren(empty)
    }
  } catch (err) {
    say(err instanceof Refused ? err.message : `Could not list the cycles: ${String(err)}`, 'error')
  }
}

let pending: { validFrom: string, opener: HTMLButtonElement } | undefined

function confirmWithdraw (validFrom: string, validTo: string, towns: number, opener: HTMLButtonElement): void {
  pending = { validFrom, opener }
  ui.confirmText.textContent = `Withdraw the cycle ${validFrom} to ${validTo}? Its ${towns} records (one per town) will be removed ` +
    'from the API at once. This cannot be undone: upload its file again to restore it.'
  ui.confirm.showModal()
  ui.confirmCancel.focus() // the safe choice has the focus
}

async function withdraw (): Promise<void> {
  const target = pending
  ui.confirm.close()
  if (target === undefined) return
  say(`Withdrawing the cycle of ${target.validFrom}…`)
  try {
    const result = await call<Withdrawn>('DELETE', cyclePath(target.validFrom), 'withdraw')
    say(`Withdrew the cycle ${result.valid_from} to ${result.valid_to}: ${result.rows_removed} records removed.`, 'done')
    await listCycles()
    ui.refresh.focus()
  } catch (err) {
    say(err instanceof Refused ? err.message : `Withdrawing failed: ${String(err)}`, 'error')
    target.opener.focus()
  }
}

function choose (file: File | undefined): void {
  chosen = file
  ui.review.disabled = file === undefined
  if (file !== undefined) void review()
}

ui.file.addEventListener('change', () => choose(ui.file.files?.[0]))
ui.review.addEventListener('click', () => { void review() })
ui.publish.addEventListener('click', askToPublish)
ui.publishConfirmOk.addEventListener('click', () => {
  ui.publishConfirm.close()
  void publish()
})
// Escape closes a dialog without a click: both ways back say that nothing was published.
ui.publishConfirm.addEventListener('cancel', () => say('Nothing was published.', 'warning'))
ui.publishConfirmCancel.addEventListener('click', () => {
  ui.publishConfirm.close()
  ui.publish.focus()
  say('Nothing was published.', 'warning')
})
ui.refresh.addEventListener('click', () => { void listCycles() })
ui.confirmOk.addEventListener('click', () => { void withdraw() })
ui.confirmCancel.addEventListener('click', () => {
  ui.confirm.close()
  pending?.opener.focus()
  say('Nothing was withdrawn.')
})
for (const type of ['dragenter', 'dragover'] as const) {
  ui.drop.addEventListener(type, (event) => { event.preventDefault(); ui.drop.classList.add('over') })
}
ui.drop.addEventListener('dragleave', () => ui.drop.classList.remove('over'))
ui.drop.addEventListener('drop', (event) => {
  event.preventDefault()
  ui.drop.classList.remove('over')
  choose(event.dataTransfer?.files[0])
})
// A file dropped beside the zone must not make the browser navigate away (and lose the token).
window.addEventListener('dragover', (event) => event.preventDefault())
window.addEventListener('drop', (event) => event.preventDefault())

void listCycles()
