import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { terminalLogger } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { serverArgs } from '../support/dist.js'
import { seedDataDir } from '../support/pglite-template.js'
import { freePort } from '../support/processes.js'

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

const SCRIPT = '/usr/bin/script'
t.test('the server at a terminal prints readable lines', { skip: existsSync(SCRIPT) ? false : `${SCRIPT} (util-linux) not found to give the server a terminal` }, async (t) => {
  const dir = t.testdir()
  const out = join(dir, 'out.txt')
  const port = await freePort()
  const server = (await serverArgs()).join(' ')
  const dataDir = await seedDataDir(join(dir, 'data')) // an existing database: no initdb before the start line
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' }
  // The server under script's terminal is not this process's child: its pid is written down
  // (`exec` keeps the shell's) so the teardown can stop it.
  const pidFile = join(dir, 'pid')
  const child = execFile(SCRIPT, ['-qfc', `sh -c 'echo $$ > ${pidFile}; exec ${process.execPath} ${server}'`, out], { env })
  t.teardown(() => {
    if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL')
    child.kill('SIGKILL')
  })
  let text = ''
  for (let i = 0; i < 150 && !text.includes('Server listening'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    text = existsSync(out) ? readFileSync(out, 'utf8') : ''
  }
  t.match(text, /\[\d{2}:\d{2}:\d{2}\] .*INFO.*: .*Server listening at http:\/\/127\.0\.0\.1:\d+/, 'a time, a level name and the message')
  t.notMatch(text, /"level":30/, 'no JSON lines')
})
