/**
 * The README's settings table and `.env.example`, written from the settings schema in
 * src/config.ts, so a setting is described in one place. scripts/generate-schemas.ts writes them
 * (`npm run generate`) and checks them (`-- --check`).
 */
import { OptionalKind, type TSchema } from '@sinclair/typebox'
import { allowedText, SETTINGS } from '../src/config.js'

export type SettingsSchema = Record<string, TSchema>

/** The README lines between which the table is generated (the markers themselves stay). */
export const TABLE_BEGIN = '<!-- settings table: generated from src/config.ts by `npm run generate`; edit the schema there -->'
export const TABLE_END = '<!-- end of the generated settings table -->'

const WIDTH = 100

/** What a setting takes: its own words, else its type and bounds in words. */
function allowed (name: string, schema: TSchema): string {
  const words = allowedText(schema)
  if (words !== undefined) return words
  const kind = schema.type === 'integer' ? 'an integer' : schema.type === 'number' ? 'a number' : undefined
  if (kind === undefined) throw new Error(`setting ${name} needs an \`allowed\` text: its type says too little`)
  if (schema.minimum !== undefined && schema.maximum !== undefined) return `${kind} from ${schema.minimum} to ${schema.maximum}`
  const bounds: string[] = []
  if (schema.exclusiveMinimum !== undefined) bounds.push(`above ${schema.exclusiveMinimum}`)
  if (schema.minimum !== undefined) bounds.push(`at least ${schema.minimum}`)
  if (schema.maximum !== undefined) bounds.push(`at most ${schema.maximum}`)
  return [kind, bounds.join(' and ')].filter((part) => part !== '').join(', ')
}

function described (name: string, schema: TSchema): string {
  const text = schema.description
  if (typeof text !== 'string' || !/^[A-Z`][^\n]*\.$/.test(text) || /\.\s+[A-Z]/.test(text)) throw new Error(`setting ${name} needs a description: one sentence, ending with a full stop`)
  return text
}

function isOptional (schema: TSchema): boolean {
  return schema[OptionalKind] === 'Optional'
}

/** The value `.env.example` shows: the default, or for a setting unset by default its example. */
function shownValue (name: string, schema: TSchema): string {
  if (schema.default !== undefined) return String(schema.default)
  const example = (schema.examples as unknown[] | undefined)?.[0]
  if (!isOptional(schema) || example === undefined) throw new Error(`setting ${name} needs a default, or Type.Optional with examples: [value]`)
  return String(example)
}

/** The Markdown table of every setting, in the schema's order. */
export function settingsTable (settings: SettingsSchema = SETTINGS): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|')
  const rows = Object.entries(settings).map(([name, schema]) => {
    shownValue(name, schema)
    const byDefault = schema.default === undefined ? 'unset' : `\`${String(schema.default)}\``
    return `| \`${name}\` | ${cell(byDefault)} | ${cell(allowed(name, schema))} | ${cell(described(name, schema))} |`
  })
  return ['| Variable | Default | Allowed | Meaning |', '|---|---|---|---|', ...rows].join('\n')
}

/** `readme` with the text between the table's markers replaced by `table`. */
export function withSettingsTable (readme: string, table: string): string {
  const begin = readme.indexOf(TABLE_BEGIN)
  const end = readme.indexOf(TABLE_END)
  if (begin === -1 || end < begin) throw new Error(`README.md needs the lines ${TABLE_BEGIN} and ${TABLE_END} around the settings table`)
  return `${readme.slice(0, begin + TABLE_BEGIN.length)}\n${table}\n${readme.slice(end)}`
}

/** Words wrapped into `# ` comment lines of at most WIDTH characters. */
function comment (text: string): string[] {
  const lines: string[] = []
  let line = '#'
  for (const word of text.split(/\s+/)) {
    if (line !== '#' && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = '#'
    }
    line += ` ${word}`
  }
  lines.push(line)
  return lines
}

/** `.env.example`: every setting commented out, at its default or an example, under its description. */
export function envExample (settings: SettingsSchema = SETTINGS): string {
  const out = [
    ...comment('Every setting of the service, all optional. Copy this file to .env and uncomment what you change: npm start and npm run dev read .env, and a variable already set in the environment wins over it (D35).'),
    ...comment('.env is ignored by git, so the tokens and passwords you put there stay out of the repository; this file holds placeholders only, never a real secret.'),
    ...comment('Each setting shows its default, or an example where it is unset by default.'),
    '# Generated from src/config.ts by npm run generate: change a setting there, not here.'
  ]
  for (const [name, schema] of Object.entries(settings)) {
    const text = `${described(name, schema)} Allowed: ${allowed(name, schema)}.`.replace(/`/g, '')
    out.push('', ...comment(text), `# ${name}=${shownValue(name, schema)}`)
  }
  return out.join('\n') + '\n'
}
