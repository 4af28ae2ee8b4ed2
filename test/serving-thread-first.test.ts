import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import t from './support/file-test.js'
import { servingThreadFirst } from '../src/serving-thread-first.js'
import { notLowered, threadNiceness } from './support/threads.js'

t.test('every thread but the serving one runs at nice 19, a thread started since included; the serving thread keeps its priority', { skip: existsSync('/proc/self/task') ? false : 'threads have no nice value of their own outside Linux' }, async (t) => {
  // A thread started by the serving thread takes its priority, 0.
  const worker = new Worker('require("node:worker_threads").parentPort.postMessage("up"); setInterval(() => {}, 1000)', { eval: true })
  t.teardown(async () => { await worker.terminate() })
  await once(worker, 'message')
  const before = threadNiceness()
  t.equal(before.get(process.pid), 0)
  t.ok([...before.values()].filter((nice) => nice === 0).length >= 2, 'the worker started at the serving thread\'s priority')
  servingThreadFirst()
  const after = threadNiceness()
  t.equal(after.get(process.pid), 0, 'the serving thread')
  t.same(notLowered(after), [], 'every other thread at nice 19')
  t.ok(after.size >= 3, `${after.size} threads: the serving one, V8's helpers, the worker`)
})
