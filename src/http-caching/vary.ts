import type { FastifyReply } from 'fastify'

/** Adds a field to Vary, keeping what is there (CORS has already put `Origin` in it). */
export function addVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) {
    void reply.header('vary', field)
    return
  }
  const joined = Array.isArray(current) ? current.join(',') : String(current)
  const fields = joined.split(',').map((f) => f.trim()).filter((f) => f !== '')
  if (fields.some((f) => f === '*' || f.toLowerCase() === field.toLowerCase())) return
  void reply.header('vary', [...fields, field].join(', '))
}
