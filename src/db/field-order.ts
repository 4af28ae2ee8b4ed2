import type { Static, TObject } from '@sinclair/typebox'

/** `values` re-keyed in `schema`'s field order: PostgreSQL writes a row's JSON in the order of its columns. */
export function inFieldOrder<S extends TObject, T extends Record<keyof Static<S>, unknown>> (schema: S, values: T): T {
  return Object.fromEntries(Object.keys(schema.properties).map((name) => [name, values[name as keyof Static<S>]])) as T
}
