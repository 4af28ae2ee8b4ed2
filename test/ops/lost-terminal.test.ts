import t from '../support/file-test.js'
import { needs } from '../services.js'
import { EXIT_BUDGET_MS, exitWithin, serverOnTerminal } from './_lost-terminal.js'

/** D60: the terminal the server was started from is closed (a SIGHUP), in both log modes. */

t.test('[D60] the terminal hangs up: SIGHUP shuts the server down cleanly, exit code 0', await needs('pty'), async (t) => {
  for (const mode of ['json', 'pretty'] as const) {
    await t.test(mode, async (t) => {
      const { server } = await serverOnTerminal(t, mode, true)
      await server.hangUp()
      t.equal(await exitWithin(server, EXIT_BUDGET_MS), 0, 'exited by itself, neither killed nor spinning')
    })
  }
})
