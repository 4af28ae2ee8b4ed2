import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from '../support/file-test.js'
import { createPglite } from '../../src/db/client.js'
import { initPgliteDataDir } from '../../src/db/pglite-memory.js'
import { pgliteTemplate } from '../support/pglite-template.js'

// It needs no PostgreSQL, so it runs in both of CI's passes (a skip there counts as a failure, D34).

t.test('[D36] PGlite starts with the memory settings; durability settings as PostgreSQL has them', async (t) => {
  // The settings come from the start parameters, not from initdb: the migrated template will do.
  const pg = await createPglite('memory://', { loadDataDir: await pgliteTemplate() })
  t.teardown(async () => { await pg.close() })
  const { rows } = await pg.query<{ name: string, value: string }>(
    'SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1) ORDER BY name',
    [['fsync', 'shared_buffers', 'wal_buffers', 'min_wal_size', 'max_wal_size', 'work_mem', 'maintenance_work_mem',
      'temp_buffers', 'synchronous_commit', 'full_page_writes']]
  )
  t.same(rows.map((r) => `${r.name}=${r.value}`), [
    'fsync=off', // PGlite's own -F, unchanged; its Node file system has no fsync either (README)
    'full_page_writes=on',
    'maintenance_work_mem=16MB',
    'max_wal_size=64MB',
    'min_wal_size=32MB',
    'shared_buffers=16MB',
    'synchronous_commit=on',
    'temp_buffers=1MB',
    'wal_buffers=512kB',
    'work_mem=4MB'
  ])
})

t.test('[D36] a new data directory is created by the initdb child; a failure is one line', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'fuel-initdb-'))
  t.teardown(() => { rmSync(parent, { recursive: true, force: true }) })
  const dataDir = join(parent, 'data')
  await initPgliteDataDir(dataDir)
  t.ok(existsSync(join(dataDir, 'PG_VERSION')), 'PG_VERSION written')
  t.ok(existsSync(join(dataDir, 'base')) && existsSync(join(dataDir, 'global')), 'the cluster moved up')
  t.notOk(existsSync(join(dataDir, '.initdb')), 'no staging directory left')

  const notADirectory = join(parent, 'file')
  writeFileSync(notADirectory, 'x')
  const err = await initPgliteDataDir(join(notADirectory, 'data')).then(() => undefined, (e: unknown) => e as Error)
  t.ok(err instanceof Error, 'rejects')
  t.match(err?.message, new RegExp(`^could not create the PGlite data directory ${join(notADirectory, 'data')}: `))
  t.notMatch(err?.message, /\n/, 'one line')
})
