import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from '../support/file-test.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { serverArgs } from '../support/dist.js'

/** D49 safe defaults: no open upload in production, no credential in any message, settings that say what they allow. */

async function start (env: Record<string, string>): Promise<{ code: number | null, stderr: string }> {
  const child = spawn(process.execPath, await serverArgs(), {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: 'memory://', ...env },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  return { code, stderr }
}

t.test('NODE_ENV=production without INGEST_TOKEN does not start: one line, exit 1', async (t) => {
  t.same(await start({ NODE_ENV: 'production' }), { code: 1, stderr: 'INGEST_TOKEN must be set when NODE_ENV=production (without it anyone may upload prices)\n' })
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), ConfigError)
  t.equal(loadConfig({ NODE_ENV: 'production', INGEST_TOKEN: 'x' }).ingestToken, 'x')
  t.equal(loadConfig({ NODE_ENV: 'development' }).ingestToken, undefined, 'development stays open (with its warning)')
})

t.test('a mistyped DATABASE_URL never shows its password', async (t) => {
  const run = await start({ DATABASE_URL: 'postgress://fuel:s3cretpw@db.internal:5432/fuel' })
  t.same(run, { code: 1, stderr: 'Invalid environment variable DATABASE_URL="postgress://***@db.internal:5432/fuel": expected a postgres:// or postgresql:// URL\n' })
  t.throws(() => loadConfig({ REDIS_URL: 'http://user:hunter2@cache:6379' }),
    new ConfigError('Invalid environment variable REDIS_URL="http://***@cache:6379": expected a redis:// or rediss:// URL'))
})

t.test('LOG_LEVEL names what it allows, and takes any case', async (t) => {
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }),
    new ConfigError('Invalid environment variable LOG_LEVEL="loud": expected one of fatal, error, warn, info, debug, trace, silent (any case)'))
  t.equal(loadConfig({ LOG_LEVEL: 'INFO' }).logLevel, 'info')
  t.equal(loadConfig({ LOG_LEVEL: 'Warn' }).logLevel, 'warn')
})

t.test('[D52] PUBLIC_URL is an origin; a trailing slash is dropped; anything else says what it allows', async (t) => {
  t.equal(loadConfig({}).publicUrl, undefined)
  t.equal(loadConfig({ PUBLIC_URL: 'https://api.fuelkenya.com/' }).publicUrl, 'https://api.fuelkenya.com')
  t.equal(loadConfig({ PUBLIC_URL: 'http://localhost:8000' }).publicUrl, 'http://localhost:8000')
  const allowed = 'expected an origin such as https://api.fuelkenya.com (scheme, host and port only)'
  t.throws(() => loadConfig({ PUBLIC_URL: 'https://fuelkenya.com/api' }),
    new ConfigError(`Invalid environment variable PUBLIC_URL="https://fuelkenya.com/api": ${allowed}`))
  t.throws(() => loadConfig({ PUBLIC_URL: 'https://admin:s3cret@fuelkenya.com' }),
    new ConfigError(`Invalid environment variable PUBLIC_URL="https://***@fuelkenya.com": ${allowed}`))
})
