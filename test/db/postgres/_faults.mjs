/* global process, setTimeout, console */
// Two faults of a postgres.js connection, run against the copy of postgres.js named by argv[2]:
// "closed-write" and "error-then-query" (argv[3]). Prints the outcome; an uncaught error exits 1.
import net from 'node:net'

const [moduleDir, scenario, url] = process.argv.slice(2)
const { default: postgres } = await import(`${moduleDir}/src/index.js`)
const admin = postgres(url, { max: 1, onnotice: () => {} })
let socket
const sql = postgres(url, {
  max: 1,
  onnotice: () => {},
  socket: ({ host, port }) => (socket = net.connect({ host: host[0], port: port[0] }))
})
const pid = async (q) => (await q`SELECT pg_backend_pid() AS pid`)[0].pid

if (scenario === 'closed-write') {
  // A reserved connection whose backend is gone: the next query's write is deferred with
  // setImmediate and runs after close() has set the socket to null.
  const reserved = await sql.reserve()
  await admin`SELECT pg_terminate_backend(${await pid(reserved)})`
  await new Promise((resolve) => setTimeout(resolve, 200))
  const outcome = await reserved`SELECT 1`.then(() => 'answered', (err) => `rejected ${err.code}`)
  console.log(outcome)
} else {
  // A socket error in a transaction: postgres.js sends the ROLLBACK before the socket's 'close',
  // then reconnects the slot; the next queries must be answered.
  const outcome = await sql.begin(async (tx) => {
    setTimeout(() => socket.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), 100)
    await tx`SELECT pg_sleep(5)`
  }).then(() => 'committed', (err) => `rejected ${err.code}`)
  // The first query reconnects the slot; the wedge shows from the second on.
  const next = await Promise.race([
    (async () => `answered ${(await sql`SELECT 1 AS n`)[0].n} and ${(await sql`SELECT 2 AS n`)[0].n}`)(),
    new Promise((resolve) => setTimeout(() => resolve('no answer within 3 s'), 3000))
  ])
  console.log(`${outcome}; ${next}`)
}
await Promise.race([Promise.all([sql.end({ timeout: 1 }), admin.end({ timeout: 1 })]), new Promise((resolve) => setTimeout(resolve, 2000))])
process.exit(0)
