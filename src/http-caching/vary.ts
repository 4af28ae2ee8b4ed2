import type { FastifyReply } from 'fastify'

/** Adds a field to Vary, keeping what is there (CORS has already put `Origin` in it). */
export function addVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) {
    void reply.header('vary', field)
    return
  }
  const wanted = field.toLowerCase()
  const kept: string[] = []
  for (const member of (Array.isArray(current) ? current.join(',') : String(current)).split(',')) {
    const name = member.trim()
    if (name === '*' || name.toLowerCase() === wanted) return
    if (name !== '') kept.push(name)
  }
  kept.push(field)
  // join makes one flat string; a `+=` chain makes a rope Node flattens again to check the header's characters.
  void reply.header('vary', kept.join(', '))
}
