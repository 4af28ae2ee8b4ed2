import { readdirSync, readFileSync } from 'node:fs'

/** A process's threads by id, with each one's nice value (field 19 of its stat line): Linux keeps one per thread. */
export function threadNiceness (pid: number | 'self' = 'self'): Map<number, number> {
  const nice = new Map<number, number>()
  for (const id of readdirSync(`/proc/${pid}/task`)) {
    try {
      nice.set(Number(id), Number(readFileSync(`/proc/${pid}/task/${id}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]))
    } catch {
      // a thread that ended since the list was read
    }
  }
  return nice
}

/** The threads of `threads` (from threadNiceness) other than the serving one, `pid`, not at nice 19: none, when requests come first. */
export function notLowered (threads: Map<number, number>, pid = process.pid): Array<[number, number]> {
  return [...threads].filter(([id, nice]) => id !== pid && nice !== 19)
}
