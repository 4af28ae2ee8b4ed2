import t from '../support/file-test.js'
import { ConfigError } from '../../src/config.js'
import { DataDirInUseError, DataDirUnwritableError } from '../../src/db/data-dir-lock.js'
import { startupErrorLine, type StartupContext } from '../../src/startup-errors.js'

const pg: StartupContext = { host: '0.0.0.0', port: 8000, databaseUrl: 'postgres://fuel:secret@db.internal:5433/fuel', dataDir: './data' }
const lite: StartupContext = { ...pg, databaseUrl: undefined }

function errno (message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields)
}

t.test('[D33] a config error is its own message', async (t) => {
  t.equal(startupErrorLine(new ConfigError('Invalid environment variable PORT="x": Expected integer'), lite), 'Invalid environment variable PORT="x": Expected integer')
})

t.test('[D33] a database that does not exist', async (t) => {
  const err = Object.assign(new Error('database "fuel" does not exist'), { name: 'PostgresError', code: '3D000' })
  t.equal(startupErrorLine(err, pg), 'Cannot start: database "fuel" does not exist on the PostgreSQL server at db.internal:5433 (DATABASE_URL)')
})

t.test('[D33] an unreachable PostgreSQL server; the password is never shown', async (t) => {
  const line = startupErrorLine(errno('connect ECONNREFUSED', { code: 'ECONNREFUSED', syscall: 'connect' }), pg)
  t.equal(line, 'Cannot start: the PostgreSQL server at db.internal:5433 is not reachable (ECONNREFUSED); check DATABASE_URL and that PostgreSQL is running')
  t.notMatch(line, 'secret')
})

t.test('[D33] the port already in use', async (t) => {
  t.equal(startupErrorLine(errno('listen EADDRINUSE', { code: 'EADDRINUSE', syscall: 'listen' }), lite), 'Cannot start: port 8000 is already in use on 0.0.0.0 (PORT, HOST)')
})

t.test('[D33] an unwritable DATA_DIR', async (t) => {
  t.equal(startupErrorLine(new DataDirUnwritableError('./data', 'EACCES', { cause: undefined }), lite), 'Cannot start: DATA_DIR ./data is not writable (EACCES); fix its permissions or set another DATA_DIR')
})

t.test('[D33] a DATA_DIR held by another running instance', async (t) => {
  t.equal(startupErrorLine(new DataDirInUseError('./data', 4242), lite), 'Cannot start: DATA_DIR ./data is in use by another running instance of the service (pid 4242); stop it or set another DATA_DIR')
})

t.test('[D33] an unknown error is still one line', async (t) => {
  t.equal(startupErrorLine(new Error('first\n  second'), lite), 'Cannot start: first second')
})
