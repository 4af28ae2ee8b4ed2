import { parse } from 'fast-querystring'

/** The app's query-string parser: an empty value means the parameter is absent, so its default applies. */
export function parseQueryString (query: string): Record<string, unknown> {
  if (query.length === 0) return {}
  const parsed = parse(query) as Record<string, unknown>
  for (const key in parsed) if (parsed[key] === '') delete parsed[key]
  return parsed
}
