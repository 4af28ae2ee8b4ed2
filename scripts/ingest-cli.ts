/**
 * `npm run ingest -- FILE.csv [--url URL] [--token T] [--dry-run]`: uploads a CSV to a running
 * service's POST /v1/ingest/csv (spec 4.5) and prints the JSON outcome. Exit status: 0 on a 2xx,
 * 1 when the server refuses the file or cannot be reached, 2 on a usage error.
 */
import { readFile } from 'node:fs/promises'
import { realpathSync } from 'node:fs'
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { CsvRejection, DryRunResponse } from '../src/generated/openapi.js'
import { parseArgs } from 'node:util'

/** The local service as the configuration (environment, then `.env`) places it. */
export function defaultUrl (env: Record<string, string | undefined>): string {
  const host = env.HOST === undefined || env.HOST === '' || env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.PORT === undefined || env.PORT === '' ? '8000' : env.PORT}`
}

const USAGE = `usage: npm run ingest -- FILE.csv [--url URL] [--token TOKEN] [--dry-run] [--json]
  --url      the service's base URL (default: http://localhost:PORT, from the environment or
             .env as the service reads them; a trailing /v1 is fine)
  --token    bearer token (default: the INGEST_TOKEN environment variable)
  --dry-run  validate and count only; nothing is written. Prints, per cycle of the file, the
             towns new or missing against the cycle before and the prices that look mistyped
  --json     print the server's JSON answer as it is`

export interface CliIo {
  env: Record<string, string | undefined>
  out: (line: string) => void
  err: (line: string) => void
}

/** The endpoint under a base URL given with or without its /v1 prefix. */
export function ingestUrl (base: string, dryRun: boolean): string {
  const root = base.replace(/\/+$/, '').replace(/\/v1$/, '')
  return `${root}/v1/ingest/csv${dryRun ? '/dry-run' : ''}`
}

export async function runIngestCli (args: string[], io: CliIo): Promise<number> {
  let values: { url?: string | undefined, token?: string | undefined, 'dry-run'?: boolean | undefined, json?: boolean | undefined, help?: boolean | undefined }
  let positionals: string[]
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        'dry-run': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      }
    }))
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  if (values.help === true) {
    io.out(USAGE)
    return 0
  }
  const [file, ...extra] = positionals
  if (file === undefined || extra.length > 0) {
    io.err(USAGE)
    return 2
  }

  let bytes: Buffer
  try {
    bytes = await readFile(file)
  } catch (err) {
    io.err(`cannot read ${file}: ${(err as Error).message}`)
    return 2
  }

  const url = ingestUrl(values.url ?? defaultUrl(io.env), values['dry-run'] === true)
  const token = values.token ?? io.env.INGEST_TOKEN
  const form = new FormData()
  form.append('file', new Blob([bytes], { type: 'text/csv' }), basename(file))
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      body: form,
      headers: token !== undefined && token !== '' ? { authorization: `Bearer ${token}` } : {}
    })
  } catch (err) {
    io.err(`cannot reach ${url}: ${whyUnreachable(err)}`)
    return 1
  }

  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch { /* not JSON: print the text as it came */ }
  if (response.ok) {
    if (values['dry-run'] === true && values.json !== true && isDryRun(body)) for (const line of describeDryRun(body)) io.out(line)
    else io.out(typeof body === 'string' ? body : JSON.stringify(body, null, 2))
    return 0
  }
  for (const line of refusalLines(response.status, body, text)) io.err(line)
  return 1
}

/** Why fetch failed, in the system's words (`connect ECONNREFUSED 127.0.0.1:8000`), every address tried. */
export function whyUnreachable (err: unknown): string {
  const cause = (err as { cause?: unknown }).cause ?? err
  const tried: unknown[] = cause instanceof AggregateError ? cause.errors : [cause]
  const messages = [...new Set(tried.map((e) => (e as { message?: unknown } | null)?.message).filter((m): m is string => typeof m === 'string' && m !== ''))]
  if (messages.length > 0) return messages.join('; ')
  const code = (cause as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : String((err as Error).message)
}

/** A refusal as an admin reads it: the service's `detail`, then where and how to fix it (D51, D72). */
export function refusalLines (status: number, body: unknown, text: string): string[] {
  const answer = (typeof body === 'object' && body !== null ? body : {}) as Partial<CsvRejection> & { detail?: unknown }
  const { detail } = answer
  const said = detail === undefined ? text.slice(0, 500) : typeof detail === 'string' ? detail : JSON.stringify(detail)
  const lines = [`ingest failed: HTTP ${status}: ${said}`]
  const where = [answer.line === undefined ? '' : `line ${answer.line}`, answer.column === undefined ? '' : `column ${answer.column}`].filter((w) => w !== '')
  if (where.length > 0) lines.push(`  where: ${where.join(', ')}`)
  if (answer.missing_columns !== undefined && answer.missing_columns.length > 0) lines.push(`  missing columns: ${answer.missing_columns.join(', ')}`)
  if (answer.found_columns !== undefined) lines.push(`  found columns: ${answer.found_columns.length === 0 ? 'none' : answer.found_columns.map((c) => JSON.stringify(c)).join(', ')}`)
  if (answer.hint !== undefined) lines.push(`  hint: ${answer.hint}`)
  return lines
}

// Run only as a script, not when a test imports runIngestCli.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  try {
    process.loadEnvFile('.env') // as the service does (D35): the environment wins
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  process.exitCode = await runIngestCli(process.argv.slice(2), {
    env: process.env,
    out: (line) => { console.log(line) },
    err: (line) => { console.error(line) }
  })
}

type DryRun = DryRunResponse

function isDryRun (body: unknown): body is DryRun {
  return typeof body === 'object' && body !== null && (body as { status?: unknown }).status === 'dry_run'
}

/** A capped list of towns (D40), with how many more the answer left out. */
function towns (listed: string[], notListed: number): string {
  if (listed.length + notListed === 0) return 'none'
  return listed.join(', ') + (notListed > 0 ? ` … and ${notListed} more not listed` : '')
}

/** D40: a dry run's answer as an admin reads it before the real upload. */
function describeDryRun (dry: DryRun): string[] {
  const lines = [`dry run, nothing written: ${dry.records_processed} rows (${dry.inserted} new, ${dry.updated} changed, ${dry.unchanged} unchanged)`]
  for (const cycle of dry.cycles) {
    const against = cycle.previous_valid_from === null ? 'no cycle before it' : `compared with the cycle from ${cycle.previous_valid_from}`
    lines.push('', `cycle ${cycle.valid_from} to ${cycle.valid_to} (${against})`)
    lines.push(`  new towns: ${towns(cycle.new_towns, cycle.new_towns_not_listed)}`)
    lines.push(`  missing towns: ${towns(cycle.missing_towns, cycle.missing_towns_not_listed)}`)
    for (const warning of cycle.cycle_warnings) lines.push(`  warning: ${warning.detail}`)
    const count = cycle.warnings.length + cycle.warnings_not_listed
    lines.push(`  warnings: ${count === 0 ? 'none' : count}`)
    for (const warning of cycle.warnings) lines.push(`    ${warning.detail}`)
    if (cycle.warnings_not_listed > 0) lines.push(`    … and ${cycle.warnings_not_listed} more not listed`)
  }
  return lines
}
