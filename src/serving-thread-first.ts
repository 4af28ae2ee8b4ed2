import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/**
 * Requests come first: every thread of the process but the one that serves them (V8's garbage
 * collection and compiler helpers, libuv's pool, the CSV parse) runs at the lowest priority,
 * nice 19, so on a busy machine the serving thread takes a core before their work goes on. Linux
 * keeps a nice value per thread and lists the threads in /proc/self/task; the serving thread's id
 * is the process id. A thread started later takes its starter's priority, so the ingest and its
 * worker call this again for each parse. Raising a nice value needs no privilege, and it cannot be
 * lowered again without one, so it is never undone; outside Linux nothing changes. What it gains
 * and costs is measured by the bench (bench/NOTES.md).
 */
export function servingThreadFirst (): void {
  let threads: string[]
  try {
    threads = readdirSync('/proc/self/task')
  } catch {
    return // not Linux: every thread keeps the process's priority
  }
  for (const id of threads) {
    if (Number(id) === process.pid) continue
    try {
      setPriority(Number(id), 19)
    } catch {
      // a thread that ended since the list was read
    }
  }
}
