import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import t from '../support/file-test.js'
import { rowsOf } from '../../src/db/client.js'
import { townOrder } from '../../src/db/schema.js'
import { townKey } from '../../src/domain/town.js'
import { testDatabase } from '../helper.js'

/** Town order (D3) has one SQL home, src/db/schema.ts's townOrder, and one JavaScript home, townKey. */

t.test('the SQL of the town order is written once, in src/db/schema.ts', async (t) => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url))
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [])
  const writing = files(src).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/COLLATE "C"/g)].map(() => relative(src, f)))
  t.strictSame(writing.filter((f) => f !== 'domain/town.ts'), ['db/schema.ts'], 'once in code (domain/town.ts names it in a comment)')
})

t.test('the database orders towns as townKey does', async (t) => {
  const database = await testDatabase()
  const towns = ['Elburgon', 'El Wak', "Moi's Bridge", 'moiben', 'Mombasa', 'Kapsabet-Town', 'Kapsabet Town', 'NAIROBI', 'nairobi west', 'Nairobi']
  const rows = rowsOf<{ town: string }>(await database.db.execute(sql`
    SELECT v.town FROM (VALUES ${sql.join(towns.map((town) => sql`(${town})`), sql`, `)}) AS v(town)
    ORDER BY ${townOrder(sql.raw('v.town'))}, v.town COLLATE "C"`))
  const byKey = [...towns].sort((a, b) => (townKey(a) < townKey(b) ? -1 : townKey(a) > townKey(b) ? 1 : a < b ? -1 : a > b ? 1 : 0))
  t.strictSame(rows.map((r) => r.town), byKey)
  t.strictSame(byKey.slice(0, 2), ['El Wak', 'Elburgon'], 'byte-wise: a space sorts before a letter')
})
