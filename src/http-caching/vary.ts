import type { FastifyReply } from 'fastify'

/** Adds a field to Vary, keeping what is there (CORS has already put `Origin` in it). */
export function addVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) {
    void reply.header('vary', field)
    return
  }
  // One pass over the members, no intermediate arrays: this runs twice on every cached read.
  const wanted = field.toLowerCase()
  let kept = ''
  for (const member of (Array.isArray(current) ? current.join(',') : String(current)).split(',')) {
    const name = member.trim()
    if (name === '*' || name.toLowerCase() === wanted) return
    if (name !== '') kept += `${name}, `
  }
  void reply.header('vary', kept + field)
}
