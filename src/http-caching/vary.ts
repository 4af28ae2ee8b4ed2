import type { FastifyReply } from 'fastify'

/** Vary values are written by this service's code, so few distinct (current, field) pairs occur. */
const MAX_MEMO = 64
const merged = new Map<string, Map<string, string>>()

/** Adds a field to Vary, keeping what is there (CORS has already put `Origin` in it). */
export function addVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) {
    void reply.header('vary', field)
    return
  }
  if (typeof current !== 'string') {
    const joined = Array.isArray(current) ? current.join(',') : String(current)
    const value = mergeVary(joined, field)
    if (value !== joined) void reply.header('vary', value)
    return
  }
  // A page sends Origin, Accept, Accept-Encoding: remembered, not split and joined per request.
  let byField = merged.get(current)
  let value = byField?.get(field)
  if (value === undefined) {
    value = mergeVary(current, field)
    if (byField === undefined && merged.size < MAX_MEMO) merged.set(current, byField = new Map())
    if (byField !== undefined && byField.size < MAX_MEMO) byField.set(field, value)
  }
  if (value !== current) void reply.header('vary', value)
}

function mergeVary (current: string, field: string): string {
  if (current === 'Origin' && field.toLowerCase() !== 'origin') return `Origin, ${field}`
  const fields = current.split(',').map((f) => f.trim()).filter((f) => f !== '')
  if (fields.some((f) => f === '*' || f.toLowerCase() === field.toLowerCase())) return current
  return [...fields, field].join(', ')
}
