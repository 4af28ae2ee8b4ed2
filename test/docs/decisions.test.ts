import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, relative } from 'node:path'
import t from '../support/file-test.js'
import { openApiDocument } from '../support/openapi-document.js'

/**
 * Every decision id (`Dn`) and specification section (`spec 4.5`, `[spec 7]`) cited in the project
 * resolves to a heading of docs/decisions.md (`## Dn — title`) or docs/api-rules.md
 * (`## 4.5 title`), and every such heading is followed by text.
 *
 * Scope (what counts as a citation), chosen to avoid false positives:
 * - Roots: src/, test/, scripts/, bench/ (when present), .ci/, openapi.yaml, README.md, and
 *   docs/ (api-rules.md and the operator, client and development pages cite decisions).
 *   docs/decisions.md itself is not scanned: its own headings are what citations resolve to.
 * - Skipped: src/generated/ (generated from openapi.yaml, which is scanned itself),
 *   node_modules/ and build output; any file that is not source or documentation text (only the
 *   extensions in TEXT_EXTENSIONS, plus extension-less scripts under .ci/), so CSV/SQL/TXT
 *   fixture data, lock files and binaries are never read; and a file containing a NUL byte.
 * - `Dn` is a capital D and one or two digits standing alone as a word (`\b`), so `a1D2` in a
 *   hex string never counts; a match inside a run of 20 or more base64/hex characters
 *   (`[A-Za-z0-9+/=]`) is taken to be encoded data, not a citation (`D7/D5/D30` is a run of 9).
 * - `spec x.y` is the word spec (any case), an optional §, and a dotted section number; the
 *   bracketed form `[spec 4.5]` is covered by the same pattern.
 */

const root = new URL('../../', import.meta.url).pathname
const SCAN_ROOTS = ['src', 'test', 'scripts', 'bench', '.ci', 'openapi.yaml', 'README.md', 'docs']
const SKIPPED = new Set(['src/generated', 'node_modules', 'dist', 'coverage', '.tap', 'data', 'docs/decisions.md'])
const TEXT_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.yaml', '.yml', '.md', '.sh'])

const DECISION_CITATION = /\bD(\d{1,2})\b/g
const SPEC_CITATION = /\bspec §?(\d+(?:\.\d+)*)/gi
const ENCODED_RUN = /[A-Za-z0-9+/=]/
const ENCODED_RUN_MIN = 20

export interface Citation { file: string, line: number, id: string }

/** The files of the scope above, relative to the repository root. */
function filesInScope (): string[] {
  const files: string[] = []
  const visit = (path: string): void => {
    const rel = relative(root, path)
    if (SKIPPED.has(rel)) return
    const stat = statSync(path)
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) visit(join(path, name))
      return
    }
    const ext = extname(path)
    if (TEXT_EXTENSIONS.has(ext) || (ext === '' && rel.startsWith('.ci/'))) files.push(rel)
  }
  for (const entry of SCAN_ROOTS) {
    if (existsSync(join(root, entry))) visit(join(root, entry))
  }
  return files
}

/** Is the match at [start, end) part of a long run of base64/hex characters? */
function insideEncodedRun (text: string, start: number, end: number): boolean {
  let from = start
  let to = end
  while (from > 0 && ENCODED_RUN.test(text[from - 1]!)) from--
  while (to < text.length && ENCODED_RUN.test(text[to]!)) to++
  return to - from >= ENCODED_RUN_MIN
}

/** The decision ids (`D12`) and spec sections (`4.5`) cited in `text`, with their lines. */
export function citations (file: string, text: string): { decisions: Citation[], sections: Citation[] } {
  const decisions: Citation[] = []
  const sections: Citation[] = []
  text.split('\n').forEach((lineText, index) => {
    for (const m of lineText.matchAll(DECISION_CITATION)) {
      if (insideEncodedRun(lineText, m.index, m.index + m[0].length)) continue
      decisions.push({ file, line: index + 1, id: `D${Number(m[1])}` })
    }
    for (const m of lineText.matchAll(SPEC_CITATION)) sections.push({ file, line: index + 1, id: m[1]! })
  })
  return { decisions, sections }
}

interface Heading { id: string, title: string, body: string }

/** The `## ` headings of a markdown text whose title starts with an id, with the text under each. */
export function headings (markdown: string, idPattern: RegExp): Heading[] {
  const found: Heading[] = []
  const parts = markdown.split(/^## /m).slice(1)
  for (const part of parts) {
    const newline = part.indexOf('\n')
    const title = (newline === -1 ? part : part.slice(0, newline)).trim()
    const body = newline === -1 ? '' : part.slice(newline + 1).trim()
    const m = idPattern.exec(title)
    if (m) found.push({ id: m[1]!, title, body })
  }
  return found
}

const DECISION_HEADING = /^(D\d+) — \S/
const SECTION_HEADING = /^(\d+(?:\.\d+)*) \S/

/** `file:line: id …` for every citation whose id has no heading. */
export function unresolved (cited: Citation[], known: Set<string>, doc: string): string[] {
  return cited.filter((c) => !known.has(c.id)).map((c) => `${c.file}:${c.line}: ${c.id} has no heading in ${doc}`)
}

const decisionsMd = readFileSync(join(root, 'docs/decisions.md'), 'utf8')
const rulesMd = readFileSync(join(root, 'docs/api-rules.md'), 'utf8')

function scan (): { decisions: Citation[], sections: Citation[] } {
  const decisions: Citation[] = []
  const sections: Citation[] = []
  for (const file of filesInScope()) {
    const text = readFileSync(join(root, file), 'utf8')
    if (text.includes('\0')) continue // binary after all
    const found = citations(file, text)
    decisions.push(...found.decisions)
    if (file !== 'docs/api-rules.md') sections.push(...found.sections)
  }
  return { decisions, sections }
}

t.test('every Dn cited in the code, tests, scripts, contract, README and docs/ has a heading in docs/decisions.md', async (t) => {
  const { decisions } = scan()
  t.ok(decisions.length > 50, `the scan finds the project's citations (${decisions.length})`)
  const known = new Set(headings(decisionsMd, DECISION_HEADING).map((h) => h.id))
  t.same(unresolved(decisions, known, 'docs/decisions.md'), [])
})

t.test('every [spec x.y] / spec x.y cited has a heading in docs/api-rules.md', async (t) => {
  const { sections } = scan()
  t.ok(sections.length > 50, `the scan finds the project's spec citations (${sections.length})`)
  const known = new Set(headings(rulesMd, SECTION_HEADING).map((h) => h.id))
  t.same(unresolved(sections, known, 'docs/api-rules.md'), [])
})

t.test('each heading is followed by text, and each id has one heading', async (t) => {
  for (const [doc, markdown, pattern] of [
    ['docs/decisions.md', decisionsMd, DECISION_HEADING],
    ['docs/api-rules.md', rulesMd, SECTION_HEADING]
  ] as const) {
    const found = headings(markdown, pattern)
    t.same(found.filter((h) => h.body === '').map((h) => h.title), [], `${doc}: no empty heading`)
    const ids = found.map((h) => h.id)
    t.same(ids.filter((id, i) => ids.indexOf(id) !== i), [], `${doc}: no id twice`)
  }
  // Ids only grow: each new decision takes the next number, and the list reads in order.
  const ids = headings(decisionsMd, DECISION_HEADING).map((h) => Number(h.id.slice(1)))
  t.same(ids, [...ids].sort((a, b) => a - b), 'decisions in ascending order of id')
})

t.test('docs/decisions.md is a record: short entries, each with context, decision, consequences and status', async (t) => {
  t.ok(decisionsMd.split('\n').length <= 450, `at most 450 lines (${decisionsMd.split('\n').length})`)
  for (const { id, body } of headings(decisionsMd, DECISION_HEADING)) {
    const lines = body.split('\n').length
    t.ok(lines <= 20, `${id}: at most 20 lines (${lines})`)
    for (const part of ['**Context:**', '**Decision:**', '**Consequences:**', '**Status:**']) {
      t.ok(body.includes(part), `${id} has ${part}`)
    }
    // Measurements and their dates belong in bench/NOTES.md or a commit message.
    t.notMatch(body, /\b\d+(?:[.,]\d+)?\s?µs\b|\b\d{2}:\d{2}(?:[–-]\d{2}:\d{2})? UTC\b|\b20\d\d-\d\d-\d\d, /, `${id}: no dated measurement`)
  }
})

t.test('every operation of openapi.yaml has a section of docs/api-rules.md', async (t) => {
  const contract = openApiDocument() as { paths: Record<string, Record<string, unknown>> }
  const titles = headings(rulesMd, SECTION_HEADING).map((h) => h.title)
  const operations = Object.entries(contract.paths).flatMap(([path, item]) =>
    Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((m) => `${m.toUpperCase()} ${path}`))
  t.ok(operations.length >= 13, `operations found (${operations.length})`)
  t.same(operations.filter((op) => !titles.some((title) => title.includes(op))), [])
})

t.test('the check fails, naming file and id, when a heading is removed or emptied', async (t) => {
  const cited = citations('src/example.ts', '// D4 and D30 (spec 4.5)\nconst x = 1 // [spec 7]')
  t.same(cited.decisions.map((c) => `${c.file}:${c.line}:${c.id}`), ['src/example.ts:1:D4', 'src/example.ts:1:D30'])
  t.same(cited.sections.map((c) => `${c.line}:${c.id}`), ['1:4.5', '2:7'])

  const withoutD30 = decisionsMd.replace(/^## D30 — .*$/m, '')
  const known = new Set(headings(withoutD30, DECISION_HEADING).map((h) => h.id))
  t.same(unresolved(cited.decisions, known, 'docs/decisions.md'), ['src/example.ts:1: D30 has no heading in docs/decisions.md'])

  const without45 = rulesMd.replace(/^## 4\.5 .*$/m, '')
  const sections = new Set(headings(without45, SECTION_HEADING).map((h) => h.id))
  t.same(unresolved(cited.sections, sections, 'docs/api-rules.md'), ['src/example.ts:1: 4.5 has no heading in docs/api-rules.md'])

  const emptied = headings('## D1 — Title\n\n## D2 — Next\ntext\n', DECISION_HEADING)
  t.same(emptied.map((h) => [h.id, h.body]), [['D1', ''], ['D2', 'text']])
})

t.test('not citations: hex and base64 data, lower-case d, longer numbers', async (t) => {
  const text = [
    'sha: 9f1D2c0aD3', // hex: no word boundary
    'blob: QUJDRD2EFGHIJKLMNOPQRSTUVWXYZ+/D4abcdefgh==', // inside a long base64 run
    'd4 D123 XD5 D6x', // not a capital D with 1–2 digits standing alone
    'see D7/D5/D30.' // citations
  ].join('\n')
  t.same(citations('x.ts', text).decisions.map((c) => c.id), ['D7', 'D5', 'D30'])
})
