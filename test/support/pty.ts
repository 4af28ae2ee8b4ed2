import { spawn } from 'node:child_process'
import { PYTHON } from '../services.js'

/**
 * A process on a real pseudo-terminal that the test can take away, through python3's `pty`
 * (Node has none of its own). python3 relays the terminal's output to its stderr, says
 * `pid N` when the process has started, `closed` when it has closed the terminal's master side
 * (a hang-up: the process's writes to it answer EIO from then on) and `exit C` when the process
 * ended (C negative for a signal). Its stdin closing kills the process, so nothing outlives a test.
 */
const HELPER = `
import os, pty, select, signal, sys
args = sys.argv[1:]
controlling = args.pop(0) == 'controlling'
if controlling:
    # the terminal is the session's own: closing it sends SIGHUP, as a closed terminal window does
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(args[0], args)
else:
    # a terminal that is nobody's controlling one: it goes away without a SIGHUP (a disowned job)
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.close(master)
        os.close(slave)
        os.execvp(args[0], args)
    os.close(slave)
print('pid %d' % pid, flush=True)
is_open = True
while True:
    ready, _, _ = select.select([0] + ([master] if is_open else []), [], [], 0.1)
    if is_open and master in ready:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b''
        if data:
            os.write(2, data)
    if 0 in ready:
        line = sys.stdin.readline()
        if line == '':
            os.kill(pid, signal.SIGKILL)
        elif line.strip() == 'close' and is_open:
            os.close(master)
            is_open = False
            print('closed', flush=True)
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print('exit %d' % os.waitstatus_to_exitcode(status), flush=True)
        break
`

export interface TerminalProcess {
  pid: number
  /** What the process wrote to its terminal so far. */
  output: () => string
  /** Closes the terminal's master side; resolves once it is closed. */
  hangUp: () => Promise<void>
  /** The exit code, negative for a signal (python's convention). */
  exited: Promise<number>
  /** SIGKILL and python3 gone: for teardown. */
  kill: () => void
}

export interface TerminalOptions {
  /** The command and its arguments. */
  command: string[]
  env: NodeJS.ProcessEnv
  cwd: string
  /** The terminal is the process's controlling one, so losing it sends SIGHUP. */
  controlling: boolean
}

export async function startOnTerminal (options: TerminalOptions): Promise<TerminalProcess> {
  const helper = spawn(PYTHON, ['-c', HELPER, options.controlling ? 'controlling' : 'detached', ...options.command], {
    env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe']
  })
  let said = ''
  let shown = ''
  const waiters: Array<() => void> = []
  const wake = (): void => { for (const w of waiters.splice(0)) w() }
  helper.stdout.on('data', (d: Buffer) => { said += d.toString(); wake() })
  helper.stderr.on('data', (d: Buffer) => { shown += d.toString() })
  let ended = false
  helper.once('close', () => { ended = true; wake() }) // after the last of its output
  const saidLine = async (pattern: RegExp): Promise<RegExpExecArray> => {
    for (;;) {
      const match = pattern.exec(said)
      if (match !== null) return match
      if (ended) throw new Error(`the pty helper ended: ${said}${shown.slice(-2000)}`)
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  const pid = Number((await saidLine(/^pid (\d+)$/m))[1])
  const exited = saidLine(/^exit (-?\d+)$/m).then((m) => Number(m[1]))
  exited.catch(() => {}) // a test that kills it in teardown does not wait for this
  return {
    pid,
    output: () => shown,
    hangUp: async () => {
      helper.stdin.write('close\n')
      await saidLine(/^closed$/m)
    },
    exited,
    kill: () => { helper.stdin.end() }
  }
}
