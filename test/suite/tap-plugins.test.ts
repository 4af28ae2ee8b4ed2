import { readFileSync } from 'node:fs'
import t from '../support/file-test.js'

/**
 * Test processes load the project's TypeScript through test/support/typescript.mjs alone: tap's
 * own TypeScript plugin is removed in package.json, and scripts/tap-plugins-built.mjs (pretest)
 * makes tap's test class match that list before a run starts, so even the first run after an
 * install starts no file with ts-node in front of every import.
 */
const ROOT = new URL('../..', import.meta.url)

t.test('this test process was started without tap\'s TypeScript loader, with the project\'s', async (t) => {
  const imports = process.execArgv.filter((arg) => arg.startsWith('--import'))
  t.same(imports.filter((arg) => arg.includes('@tapjs/typescript')), [])
  t.ok(imports.includes('--import=./test/support/typescript.mjs'), imports.join(' '))
})

t.test('npm test and npm run coverage make tap\'s test class match the plugin list first', async (t) => {
  const { scripts, tap } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string>, tap: { plugin: string[] } }
  t.same(tap.plugin, ['!@tapjs/typescript'])
  t.equal(scripts.pretest, 'node scripts/tap-plugins-built.mjs')
  t.equal(scripts.precoverage, 'node scripts/tap-plugins-built.mjs')
})
