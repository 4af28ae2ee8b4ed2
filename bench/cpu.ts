import type postgres from 'postgres'
import { BENCH_APPLICATION } from './database.js'
import { cpuSeconds } from './processes.js'

/**
 * The server's CPU over a load run (utime + stime from /proc): the service and the PostgreSQL backends
 * serving it, sampled every 100 ms; the bench's own connections and autovacuum are left out.
 */
export class CpuMeter {
  private readonly first = new Map<number, number>()
  private readonly last = new Map<number, number>()
  private timer: NodeJS.Timeout | undefined
  private sampling: Promise<void> = Promise.resolve()
  private backendsRead = 0
  private backendsUnread = 0

  constructor (private readonly pids: number[], private readonly sql?: postgres.Sql, private readonly database?: string) {}

  private async sample (): Promise<void> {
    const pids = [...this.pids]
    if (this.sql !== undefined && this.database !== undefined) {
      const rows = await this.sql<Array<{ pid: number }>>`
        SELECT pid FROM pg_stat_activity
        WHERE datname = ${this.database} AND backend_type = 'client backend' AND application_name IS DISTINCT FROM ${BENCH_APPLICATION}`
      pids.push(...rows.map((r) => r.pid))
    }
    for (const pid of pids) {
      const seconds = cpuSeconds(pid)
      if (seconds === undefined) {
        // Gone since the query (a pgbench backend at its end), or on another host.
        if (!this.pids.includes(pid)) this.backendsUnread++
        continue
      }
      if (!this.pids.includes(pid)) this.backendsRead++
      if (!this.first.has(pid)) this.first.set(pid, this.timer === undefined ? seconds : 0)
      this.last.set(pid, seconds)
    }
  }

  /** False when no backend's /proc entry could be read (PostgreSQL on another host). */
  get backendsVisible (): boolean {
    return this.backendsRead > 0 || this.backendsUnread === 0
  }

  async start (): Promise<void> {
    await this.sample()
    this.timer = setInterval(() => { this.sampling = this.sampling.then(async () => await this.sample()).catch(() => {}) }, 100)
  }

  /** After stop(): the seconds of the processes named (not their PostgreSQL backends). */
  ownSeconds = 0

  async stop (): Promise<number> {
    await this.sample()
    clearInterval(this.timer)
    await this.sampling
    let total = 0
    this.ownSeconds = 0
    for (const [pid, end] of this.last) {
      const spent = end - (this.first.get(pid) ?? 0)
      total += spent
      if (this.pids.includes(pid)) this.ownSeconds += spent
    }
    return total
  }
}
