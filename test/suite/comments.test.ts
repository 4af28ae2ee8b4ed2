import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
import ts from 'typescript'

/**
 * Comments in src/ say a rule in words; a decision id (`Dn`, docs/decisions.md) follows the words
 * as a footnote only where its reason matters, so the code reads without the decision log open.
 * Two checks: no comment is an id alone, and the ids in src/ stay few.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** The most `Dn` citations src/ may hold, counted as `grep -rhoE "\bD[0-9]{1,2}\b" src --include=*.ts --exclude-dir=generated` counts them. */
const MAX_CITATIONS = 110

const CITATION = /\bD[0-9]{1,2}\b/g

/** Ids joined by `,`, `/`, `–`, `-` or `and`, perhaps in parentheses, then at most one word. */
const ONLY_IDS = /^\(?D\d{1,2}(?:\s*(?:,|\/|–|-|and)\s*D\d{1,2})*\)?[.:;]?(?:\s+\S+)?$/u

/** Every hand-written source file under `root`: src/generated/ is openapi.yaml's, checked there. */
function sourceFiles (root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((entry) => {
    const path = join(root, entry.name)
    if (entry.isDirectory()) return entry.name === 'generated' && root === SRC ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The text of every comment in a TypeScript source, markers (`//`, `/*`, `*`, `*\/`) removed. */
function commentsOf (text: string): string[] {
  const source = ts.createSourceFile('source.ts', text, ts.ScriptTarget.Latest, true)
  const seen = new Set<number>()
  const found: string[] = []
  const take = (ranges: ts.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue
      seen.add(range.pos)
      const raw = text.slice(range.pos, range.end)
      const body = range.kind === ts.SyntaxKind.SingleLineCommentTrivia
        ? raw.slice(2)
        : raw.slice(2, -2).split('\n').map((line) => line.replace(/^\s*\*(?!\/)/, '')).join(' ')
      found.push(body.replace(/^\*/, '').replace(/\s+/g, ' ').trim())
    }
  }
  // Every token's trivia, closing braces and the end of the file included; JSDoc is read as trivia.
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return
    take(ts.getLeadingCommentRanges(text, node.pos))
    take(ts.getTrailingCommentRanges(text, node.end))
    for (const child of node.getChildren(source)) visit(child)
  }
  visit(source)
  return found
}

/** The comments of `text` that hold nothing but decision ids (and at most one word after them). */
function idOnlyComments (text: string): string[] {
  return commentsOf(text).filter((comment) => ONLY_IDS.test(comment))
}

function citations (text: string): number {
  return text.match(CITATION)?.length ?? 0
}

t.test(`src/ holds at most ${MAX_CITATIONS} decision ids, and no comment is an id alone`, async (t) => {
  const files = sourceFiles(SRC)
  t.ok(files.some((path) => relative(SRC, path) === 'ingest/csv.ts'), 'the walk reaches src/ingest/csv.ts')
  let total = 0
  const bare: string[] = []
  for (const path of files) {
    const text = readFileSync(path, 'utf8')
    total += citations(text)
    for (const comment of idOnlyComments(text)) bare.push(`${relative(SRC, path)}: ${comment}`)
  }
  t.strictSame(bare, [], 'every comment says its rule in words')
  t.ok(total <= MAX_CITATIONS, `${total} decision ids in src/, at most ${MAX_CITATIONS}`)
})

t.test('the detector finds comments that are only ids, and passes rules said in words', async (t) => {
  const sample = [
    "import { x } from './x.js'",
    'throw fileMissing() // D11',
    'const name = townFromCell(cell, line) // D4, D30',
    'const counts = { records_processed: 1 } // D15 counts',
    '/** D28 */',
    'const a = 1 /* (D7) */',
    '/**',
    ' * D45',
    ' */',
    'const b = 2 // D5–D10.',
    '// ties broken by id, so offset pages never repeat (D2)',
    'const c = 3 // D15 counts the rows',
    "const d = 'D11' // the id in a string is not a comment",
    '/** The token is checked first (D13). */',
    'const e = /a\\/\\/ D9/ // a regular expression holds no comment',
    '// DD-MM-YYYY',
    '// D100 is not an id',
    'const o = {',
    '  a: 1, // D32',
    '}',
    '// D60 at the end'
  ].join('\n')
  t.strictSame(idOnlyComments(sample), ['D11', 'D4, D30', 'D15 counts', 'D28', '(D7)', 'D45', 'D5–D10.', 'D32'])
  t.equal(commentsOf(sample).length, 16, 'every comment of the sample is read, once')
  t.equal(citations(sample), 16, 'each id counts once, in code and comments alike; D100 is not one')
})
