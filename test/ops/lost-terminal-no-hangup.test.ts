import t from '../support/file-test.js'
import { needs } from '../services.js'
import { mainThreadCpuSeconds, rawGet, sleep } from '../support/processes.js'
import { EXIT_BUDGET_MS, exitWithin, serverOnTerminal } from './_lost-terminal.js'

/** D60: the terminal goes away without telling the server (a disowned job), in both log modes. */

t.test('[D60] the terminal goes away without a SIGHUP: the server keeps serving, idles, and honours SIGTERM', await needs('pty'), async (t) => {
  for (const mode of ['json', 'pretty'] as const) {
    await t.test(mode, async (t) => {
      const { server, url } = await serverOnTerminal(t, mode, false)
      await server.hangUp()
      // each request's access line now meets a terminal that answers EIO
      t.equal((await rawGet(`${url}/v1/health`)).status, 200, 'serves after its log lines failed')
      t.equal((await rawGet(`${url}/v1/towns`)).status, 200)
      // the main thread, where the spin was: V8 may still be compiling PGlite's module on its own threads
      const before = mainThreadCpuSeconds(server.pid) as number
      await sleep(1000)
      const used = (mainThreadCpuSeconds(server.pid) as number) - before
      t.ok(used < 0.3, `idle: ${used.toFixed(2)} s of CPU in a second on the main thread (a spin is about 1)`)
      t.equal((await rawGet(`${url}/v1/health`)).status, 200, 'still serving')
      process.kill(server.pid, 'SIGTERM')
      t.equal(await exitWithin(server, EXIT_BUDGET_MS), 0, 'SIGTERM: a clean shutdown, exit code 0')
    })
  }
})
