import type { FastifyReply } from 'fastify'

/** Adds fields to Vary, keeping what is there as written (CORS has already put `Origin` in it);
 * one call for all of an answer's fields, as each call reads and rewrites the header. */
export function addVary (reply: FastifyReply, ...fields: string[]): void {
  const current = reply.getHeader('vary')
  const list = current === undefined ? '' : Array.isArray(current) ? current.join(', ') : String(current)
  const present = list.toLowerCase()
  if (names(present, '*')) return
  const added: string[] = []
  for (const field of fields) {
    const wanted = field.toLowerCase()
    if (!names(present, wanted) && !added.some((a) => a.toLowerCase() === wanted)) added.push(field)
  }
  if (added.length === 0) return
  if (list.trim() !== '') added.unshift(list)
  // join makes one flat string; a `+` makes a rope Node flattens again to check the header's characters.
  void reply.header('vary', added.join(', '))
}

/** Does the lower-cased Vary list name `wanted`? Scanned in place: splitting the list into an
 * array on every answer cost more than the rest of a cached read's own code. */
function names (list: string, wanted: string): boolean {
  for (let at = list.indexOf(wanted); at !== -1; at = list.indexOf(wanted, at + 1)) {
    if (memberEnds(list, at - 1, -1) && memberEnds(list, at + wanted.length, 1)) return true
  }
  return false
}

/** Is the member over at `i`: only blanks from there to a comma or the list's end (walking by `step`)? */
function memberEnds (list: string, i: number, step: 1 | -1): boolean {
  for (; i >= 0 && i < list.length; i += step) {
    const c = list[i]
    if (c === ',') return true
    if (c !== ' ' && c !== '\t') return false
  }
  return true
}
