import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
import ts from 'typescript'

/**
 * The layers of src/ point one way: src/ingest/ parses and reviews an upload and never touches
 * the database; src/db/ holds every SQL statement and knows nothing of CSV files or their review;
 * the routes compose the two. Shared shapes (PriceRow, StoredPrice, …) live in src/domain/.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

interface Import { file: string, target: string, clause: string }

/** Every import of every .ts file under `root`: `target` is a path under `root` for a relative
 * specifier (`.js` naming the `.ts` source), else the package's name as written. */
function importsUnder (root: string): Import[] {
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return files(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
  return files(root).flatMap((path) => {
    const text = readFileSync(path, 'utf8')
    const file = relative(root, path)
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest)
    const found: Import[] = []
    const visit = (node: ts.Node): void => {
      let specifier: ts.Expression | undefined
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) specifier = node.moduleSpecifier
      else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0]
      if (specifier !== undefined && ts.isStringLiteral(specifier)) {
        const name = specifier.text
        const target = name.startsWith('.') ? relative(root, resolve(dirname(path), name)).replace(/\.js$/, '.ts') : name
        const clause = ts.isImportDeclaration(node) ? node.importClause?.getText(source) ?? '' : ''
        found.push({ file, target, clause })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    return found
  })
}

const inFolder = (path: string, folder: string): boolean => path.startsWith(`${folder}/`)

/** The imports that break the rules above, as `file → target`. */
function crossings (root: string): string[] {
  return importsUnder(root).filter(({ file, target, clause }) =>
    (inFolder(file, 'ingest') && inFolder(target, 'db')) ||
    (inFolder(file, 'db') && (inFolder(target, 'ingest') || inFolder(target, 'routes'))) ||
    // SQL is written in src/db/ only: elsewhere no driver, and from Drizzle no more than its error class.
    (!inFolder(file, 'db') && (['postgres', '@electric-sql/pglite'].includes(target) || target.startsWith('drizzle-orm/') ||
      (target === 'drizzle-orm' && clause.replace(/\s/g, '') !== '{DrizzleQueryError}')))
  ).map(({ file, target }) => `${file} → ${target}`)
}

t.test('no import crosses between src/ingest/ and src/db/, and SQL is written in src/db/ only', async (t) => {
  t.strictSame(crossings(SRC), [])
  const imports = importsUnder(SRC)
  t.ok(imports.some((i) => i.file === 'routes/ingest/index.ts' && i.target === 'ingest/slices.ts'), 'the ingest route reads the file through src/ingest/')
  t.ok(imports.some((i) => i.file === 'db/postgres/copy.ts' && i.target === 'domain/price-rows.ts'), 'and src/db/ takes its rows as src/domain/ shapes them')
})

t.test('the check finds each kind of crossing', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'layers-'))
  t.teardown(() => { rmSync(root, { recursive: true, force: true }) })
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  write('ingest/csv.ts', "import type { Database } from '../db/client.js'\nexport const x = 1\n")
  write('db/prices.ts', "export const y = async () => await import('../ingest/csv.js')\n")
  write('db/client.ts', "import postgres from 'postgres'\nexport { DrizzleQueryError } from 'drizzle-orm'\n")
  write('routes/towns.ts', "import { sql } from 'drizzle-orm'\nimport { DrizzleQueryError } from 'drizzle-orm'\n")
  write('logging/fields.ts', "import { DrizzleQueryError } from 'drizzle-orm'\nimport type { PGlite } from '@electric-sql/pglite'\n")
  write('domain/cycle.ts', "import { PgDialect } from 'drizzle-orm/pg-core'\n")
  t.strictSame(crossings(root).sort(), [
    'db/prices.ts → ingest/csv.ts',
    'domain/cycle.ts → drizzle-orm/pg-core',
    'ingest/csv.ts → db/client.ts',
    'logging/fields.ts → @electric-sql/pglite',
    'routes/towns.ts → drizzle-orm'
  ])
})
