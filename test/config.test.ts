import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import t from './support/file-test.js'
import { configKey, DEFAULT_CORS_ORIGINS, loadConfig, NOT_SETTINGS, SETTINGS, type Config } from '../src/config.js'

/** The settings schema of src/config.ts: the one place a setting is declared. */

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const settings = Object.entries<TSchema>(SETTINGS)

t.test('the config has one field per setting, named in camelCase, at its default when nothing is set', async (t) => {
  const config = loadConfig({})
  t.strictSame(Object.keys(config), Object.keys(SETTINGS).map(configKey))
  t.equal(configKey('DB_STATEMENT_TIMEOUT_MS'), 'dbStatementTimeoutMs')
  t.equal(configKey('PORT'), 'port')
  // Compile-time: the derived type has these fields with these types.
  const { dbStatementTimeoutMs, corsOrigins, trustProxy, publicUrl, logLevel }: Pick<Config, 'dbStatementTimeoutMs' | 'corsOrigins' | 'trustProxy' | 'publicUrl' | 'logLevel'> = config
  t.strictSame({ dbStatementTimeoutMs, corsOrigins, trustProxy, publicUrl, logLevel }, {
    dbStatementTimeoutMs: 15000,
    corsOrigins: DEFAULT_CORS_ORIGINS,
    trustProxy: true,
    publicUrl: undefined,
    logLevel: 'info'
  })
  t.strictSame([config.port, config.host, config.dataDir, config.maxUploadBytes, config.ingestWarnShare, config.databaseUrl],
    [8000, '0.0.0.0', './data', 10485760, 0.15, undefined])
})

t.test('every setting has a one-sentence description, and a default or an example that its own schema accepts', async (t) => {
  for (const [name, schema] of settings) {
    t.match(name, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, `${name} is CONSTANT_CASE`)
    t.match(schema.description, /^[A-Z`][^\n]*\.$/, `${name}: a sentence ending with a full stop`)
    t.notMatch(schema.description, /\.\s+[A-Z]/, `${name}: one sentence`)
    if (schema.default !== undefined) {
      t.ok(Value.Check(schema, schema.default), `${name}'s default ${JSON.stringify(schema.default)} is within its bounds`)
    } else {
      const example = (schema.examples as string[] | undefined)?.[0]
      t.type(example, 'string', `${name}, unset by default, has an example`)
      t.doesNotThrow(() => loadConfig({ [name]: example }), `${name}=${example} is accepted`)
    }
  }
})

t.test('the settings and the variables that are not settings are told apart', async (t) => {
  t.strictSame(Object.keys(NOT_SETTINGS), ['NODE_ENV'])
  t.strictSame(Object.keys(NOT_SETTINGS).filter((name) => name in SETTINGS), [])
})

/** Every read of the environment in a source text: `process.env.NAME`, `process.env[…]` or the object itself. */
function environmentReads (text: string): string[] {
  return [...text.matchAll(/process\.env\b(\s*\.\s*([A-Za-z_$][\w$]*)|\s*\[)?/g)]
    .map((m) => m[2] !== undefined ? `process.env.${m[2]}` : m[1] !== undefined ? 'process.env[…]' : 'process.env')
}

function sourceFiles (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

t.test('src/ reads settings through loadConfig only: elsewhere only the variables that are not settings', async (t) => {
  t.strictSame(environmentReads('a(process.env.PORT); b(process.env["X"]); f(process.env)'), ['process.env.PORT', 'process.env[…]', 'process.env'], 'the scan sees each kind of read')
  const strays: string[] = []
  const seen: string[] = []
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const path = relative(ROOT, file)
    const text = readFileSync(file, 'utf8')
    for (const read of environmentReads(text)) {
      seen.push(read)
      const name = read.startsWith('process.env.') ? read.slice('process.env.'.length) : undefined
      // loadConfig reads the whole environment by default: it is where the settings are read.
      const allowed = path === 'src/config.ts' ? read === 'process.env' : name !== undefined && name in NOT_SETTINGS
      if (!allowed) strays.push(`${path}: ${read}`)
    }
    if (path === 'src/config.ts') {
      // Within loadConfig, `source` is the environment: by name only what is not a setting.
      for (const [, name] of text.matchAll(/\bsource\.([A-Za-z_$][\w$]*)/g)) {
        seen.push(`source.${name}`)
        if (!((name as string) in NOT_SETTINGS)) strays.push(`${path}: source.${name}`)
      }
    }
  }
  t.strictSame(strays, [], 'a setting read from the environment outside the schema, or a variable not listed in NOT_SETTINGS')
  t.ok(seen.includes('process.env') && seen.includes('source.NODE_ENV'), 'the scan found loadConfig\'s own reads')
})

t.test('.env is ignored by git and .env.example is committed', async (t) => {
  const ignored = (path: string): boolean => {
    try {
      execFileSync('git', ['check-ignore', '-q', path], { cwd: ROOT })
      return true
    } catch {
      return false
    }
  }
  t.equal(ignored('.env'), true)
  t.equal(ignored('.env.production'), true)
  t.equal(ignored('.env.example'), false)
  t.match(readFileSync(join(ROOT, '.env.example'), 'utf8'), /^# PORT=8000$/m)
})
