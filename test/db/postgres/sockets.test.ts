import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import t from '../../support/file-test.js'
import { noDelaySockets, postgresOptions } from '../../../src/db/postgres/options.js'
import { needs, TEST_POSTGRES_URL } from '../../services.js'

/**
 * D46: the service's PostgreSQL connections are opened by noDelaySockets (TCP_NODELAY), through
 * postgres.js's `socket` option, which replaces postgres.js's own connect: these tests hold it to
 * what postgres.js did (the next host on each new connection, a Unix socket path) and prove that
 * a pool built from postgresOptions reaches a real server, failover included.
 */

/** A TCP server that records which of them each connection reached. */
async function listener (name: string, log: string[], path?: string): Promise<{ server: net.Server, port: number }> {
  const server = net.createServer((socket) => { log.push(name); socket.destroy() })
  server.listen(path ?? { host: '127.0.0.1', port: 0 })
  await once(server, 'listening')
  const address = server.address()
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 }
}

async function connected (socket: net.Socket): Promise<void> {
  await once(socket, 'connect')
  socket.destroy()
}

t.test('[D46] each new connection goes to the next host, a Unix path is used as given', async (t) => {
  const log: string[] = []
  const first = await listener('first', log)
  const second = await listener('second', log)
  const dir = mkdtempSync(join(tmpdir(), 'fuel-sockets-'))
  const unix = await listener('unix', log, join(dir, 's'))
  t.teardown(() => { first.server.close(); second.server.close(); unix.server.close(); rmSync(dir, { recursive: true, force: true }) })

  const open = noDelaySockets()
  const hosts = { host: ['127.0.0.1', '127.0.0.1'], port: [first.port, second.port] }
  for (let i = 0; i < 3; i++) await connected(open(hosts))
  await connected(open({ host: ['127.0.0.1'], port: [first.port], path: join(dir, 's') }))
  // One port for several hosts, as postgres.js parses `host1,host2:port`.
  await connected(noDelaySockets()({ host: ['127.0.0.1'], port: [first.port] }))
  while (log.length < 5) await new Promise((resolve) => setTimeout(resolve, 10))
  t.strictSame(log, ['first', 'second', 'first', 'unix', 'first'])
})

t.test('[D46] a pool with these sockets answers, and fails over to the next host', await needs('postgres'), async (t) => {
  const url = new URL(TEST_POSTGRES_URL)
  // A first host where nothing listens: postgres.js moves on to the next, as with its own connect.
  const refused = await listener('unused', [])
  refused.server.close()
  await once(refused.server, 'close')
  const failover = `postgres://${url.username}@127.0.0.1:${refused.port},${url.hostname}:${url.port === '' ? '5432' : url.port}${url.pathname}`
  for (const target of [url.toString(), failover]) {
    const sql = postgres(target, postgresOptions({ url: target, poolMax: 1 }))
    try {
      const [row] = await sql<Array<{ answer: number }>>`SELECT 6 * 7 AS answer`
      t.equal(row?.answer, 42, target)
    } finally {
      await sql.end({ timeout: 2 })
    }
  }
})
