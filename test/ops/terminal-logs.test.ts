import t from '../support/file-test.js'
import { terminalLogger } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { needs } from '../services.js'
import { serverOnTerminal } from './_lost-terminal.js'

/** Readable lines at a terminal outside production; JSON lines everywhere else. */
t.test('terminalLogger: pino-pretty only on a TTY and outside production', async (t) => {
  const config = loadConfig({})
  t.equal(terminalLogger(config, false, undefined), undefined, 'not a terminal: JSON')
  t.equal(terminalLogger(config, undefined, undefined), undefined)
  t.equal(terminalLogger(config, true, 'production'), undefined, 'production: JSON even at a terminal')
  const pretty = terminalLogger(config, true, 'development')
  t.match(pretty, { level: 'info' })
  // formatted in this thread: no transport worker to outlive a terminal that goes away (D60)
  t.equal((pretty as { transport?: unknown }).transport, undefined)
  t.equal(typeof (pretty as { stream?: { write?: unknown } }).stream?.write, 'function')
})

t.test('the server at a terminal prints readable lines', await needs('pty'), async (t) => {
  // Started as the lost-terminal tests start it, which waits for the listening line in pino-pretty's form.
  const { server } = await serverOnTerminal(t, 'pretty', false)
  t.notMatch(server.output(), /"level":\d+/, 'no JSON lines')
})
