import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type } from '@sinclair/typebox'
import type { Test } from 'tap'
import t from '../support/file-test.js'
import { paced } from '../support/pace.js'
import { SETTINGS } from '../../src/config.js'
import { driftedFiles } from '../../scripts/generate-schemas.js'
import { envExample, settingsTable, TABLE_BEGIN, TABLE_END, withSettingsTable } from '../../scripts/settings-docs.js'

/** The README's settings table and .env.example are generated from src/config.ts, and drift fails `npm run generate -- --check`. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SCRIPT = join(ROOT, 'scripts', 'generate-schemas.ts')
const TSX = import.meta.resolve('tsx')
const GENERATED = ['openapi.yaml', 'src/generated/openapi.ts', 'README.md', '.env.example']

/** A directory holding a copy of the generated files and their sources, removed after the test. */
function copyOfCheckout (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'settings-docs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const path of GENERATED) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    cpSync(join(ROOT, path), join(dir, path))
  }
  return dir
}

function generateCli (...args: string[]): { status: number | null, stdout: string, stderr: string } {
  const run = spawnSync(process.execPath, ['--import', TSX, SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', timeout: paced(60_000) })
  return { status: run.status, stdout: run.stdout, stderr: run.stderr }
}

const edit = (dir: string, path: string, from: string, to: string): void => {
  const text = readFileSync(join(dir, path), 'utf8')
  if (!text.includes(from)) throw new Error(`${path} does not contain ${from}`)
  writeFileSync(join(dir, path), text.replace(from, to))
}

t.test('the committed README table and .env.example are what the schema gives', async (t) => {
  t.strictSame(driftedFiles(ROOT).map((file) => file.path), [])
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  t.ok(readme.includes(`${TABLE_BEGIN}\n${settingsTable()}\n${TABLE_END}`))
  t.match(readme, /^\| `PORT` \| `8000` \| an integer from 0 to 65535 \| The TCP port the server listens on\. \|$/m)
  t.equal(readFileSync(join(ROOT, '.env.example'), 'utf8'), envExample())
})

t.test('--check fails, naming each file, when the table or .env.example is edited by hand; generating restores them', async (t) => {
  const dir = copyOfCheckout(t)
  t.strictSame(driftedFiles(dir).map((file) => file.path), [], 'an unchanged copy passes')
  edit(dir, 'README.md', 'The TCP port the server listens on.', 'The port.')
  edit(dir, '.env.example', '# REDIS_URL=redis://127.0.0.1:6379', '# REDIS_URL=redis://cache:6379')
  const drifted = generateCli('--check', '--root', dir)
  t.equal(drifted.status, 1)
  t.equal(drifted.stderr,
    'README.md is out of date with the settings in src/config.ts: run `npm run generate` and commit it.\n' +
    '.env.example is out of date with the settings in src/config.ts: run `npm run generate` and commit it.\n')
  const written = generateCli('--root', dir)
  t.equal(written.status, 0, written.stderr)
  t.equal(written.stdout, 'wrote README.md\nwrote .env.example\n')
  t.equal(readFileSync(join(dir, 'README.md'), 'utf8'), readFileSync(join(ROOT, 'README.md'), 'utf8'), 'generating restores the table')
  t.strictSame(driftedFiles(dir).map((file) => file.path), [])
})

t.test('a description changed in the schema makes both texts drift', async (t) => {
  const dir = copyOfCheckout(t)
  const changed = { ...SETTINGS, PORT: Type.Integer({ ...SETTINGS.PORT, description: 'Where to listen.' }) }
  t.strictSame(driftedFiles(dir, changed).map((file) => file.path), ['README.md', '.env.example'])
  t.strictSame(driftedFiles(dir).map((file) => file.path), [])
})

t.test('a setting added to the schema appears in the table and .env.example, in its place', async (t) => {
  const added = {
    ...SETTINGS,
    ARCHIVE_DAYS: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'Days an archived upload is kept; beyond, gone.' }),
    MIRROR_URL: Type.Optional(Type.String({ allowed: 'an https:// URL', examples: ['https://mirror.example/'], description: 'Where each upload is copied `after` it commits.' }))
  }
  const rows = settingsTable(added).split('\n')
  t.equal(rows.at(-2), '| `ARCHIVE_DAYS` | `8` | an integer from 1 to 64 | Days an archived upload is kept; beyond, gone. |')
  t.equal(rows.at(-1), '| `MIRROR_URL` | unset | an https:// URL | Where each upload is copied `after` it commits. |')
  t.ok(envExample(added).endsWith([
    '',
    '# Days an archived upload is kept; beyond, gone. Allowed: an integer from 1 to 64.',
    '# ARCHIVE_DAYS=8',
    '',
    '# Where each upload is copied after it commits. Allowed: an https:// URL.',
    '# MIRROR_URL=https://mirror.example/',
    ''
  ].join('\n')))
})

t.test('a setting without what the texts need is refused, by name', async (t) => {
  t.throws(() => settingsTable({ X_Y: Type.Integer({ default: 1 }) }), { message: 'setting X_Y needs a description: one sentence, ending with a full stop' })
  t.throws(() => envExample({ X_Y: Type.Integer({ description: 'Two. Sentences.' }) }), { message: 'setting X_Y needs a description: one sentence, ending with a full stop' })
  t.throws(() => envExample({ X_Y: Type.Optional(Type.Integer({ description: 'No example.' })) }), { message: 'setting X_Y needs a default, or Type.Optional with examples: [value]' })
  t.throws(() => envExample({ X_Y: Type.Integer({ description: 'Unset but required.' }) }), { message: 'setting X_Y needs a default, or Type.Optional with examples: [value]' })
  t.throws(() => settingsTable({ X_Y: Type.String({ default: 'a', description: 'Text.' }) }), { message: 'setting X_Y needs an `allowed` text: its type says too little' })
  t.throws(() => withSettingsTable('# README\n', '| table |'), { message: `README.md needs the lines ${TABLE_BEGIN} and ${TABLE_END} around the settings table` })
})
