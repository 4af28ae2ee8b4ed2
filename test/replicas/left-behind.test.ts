import { spawnSync } from 'node:child_process'
import postgres from 'postgres'
import t from '../support/file-test.js'
import { ADMIN_URL, createDatabase } from './_harness.js'

/** A throw-away database whose test process is gone (tap killed it before its teardown) is dropped by the next one made. */
if (ADMIN_URL === '') throw new Error('test/replicas needs TEST_DATABASE_URL (run it with npm run test:replicas)')

const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
t.teardown(async () => { await admin.end() })

const exists = async (name: string): Promise<boolean> =>
  (await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`).length === 1

t.test('the database of a process that is gone is dropped; a running one\'s stays', async (t) => {
  // A process that has exited: its pid is free.
  const gone = spawnSync('true').pid as number
  const orphan = `fuel_rep_${gone}_0a0b0c`
  const alive = `fuel_rep_${process.pid}_0d0e0f`
  await admin.unsafe(`CREATE DATABASE ${orphan}`)
  await admin.unsafe(`CREATE DATABASE ${alive}`)
  t.teardown(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${orphan} WITH (FORCE)`)
    await admin.unsafe(`DROP DATABASE IF EXISTS ${alive} WITH (FORCE)`)
  })
  const made = await createDatabase()
  t.teardown(made.drop)
  t.equal(await exists(orphan), false, 'the orphan is gone')
  t.equal(await exists(alive), true, 'the running process\'s database stays')
  t.equal(await exists(new URL(made.url).pathname.slice(1)), true, 'the new one is there')
})
