/**
 * The `t` of the test file now running. A file run as a process of its own (tap's default, or
 * `npx tap FILE`) gets tap's root test, as `import t from 'tap'` would. A file run inside a group
 * (test/groups/: several files in one process, which then pays for Node, tap and importing the app
 * once) gets a subtest of its own, so its hooks (`t.beforeEach`), its teardowns and its database
 * stay with its own tests and end with them.
 */
import tap, { type Test } from 'tap'

let current: Test = tap

/** Every property read or written on it goes to the current file's test. */
const fileTest = new Proxy(tap, {
  get (_target, key) {
    const value: unknown = Reflect.get(current, key, current)
    return typeof value === 'function' ? value.bind(current) : value
  },
  set (_target, key, value) {
    return Reflect.set(current, key, value, current)
  }
})

export default fileTest

/** The test of the file now running (tap's root outside a group). */
export function currentFileTest (): Test {
  return current
}

/**
 * Runs test files one after another in this process, each in a subtest named after it. Each entry
 * imports its file (a literal import, so scripts/test-files.ts sees what the group reaches).
 */
export function runFiles (files: Record<string, () => Promise<unknown>>): void {
  for (const [name, load] of Object.entries(files)) {
    void tap.test(name, async (t) => {
      // Set until the file's tests have all ended, not just its import: a helper called inside
      // them (testDatabase) belongs to this file. The next file starts only after this one ends.
      current = t
      // tap runs teardowns last-in first-out: registered first, this runs after the file's own.
      t.teardown(() => { current = tap })
      await load()
    })
  }
}
