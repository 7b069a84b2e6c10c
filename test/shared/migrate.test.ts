import test from 'ava'
import { createSql } from '../../shared/db.js'
import { listMigrations, migrate } from '../../shared/migrate.js'
import { createTestDatabase } from '../helpers/db.js'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

test('a cloned test database has every migration recorded; running again applies nothing', async (t) => {
  const db = await createTestDatabase()
  const sql = createSql(db.url, { max: 3 })
  t.teardown(async () => {
    await sql.end()
    await db.drop()
  })
  const rows = await sql<{ file: string }[]>`select file from schema_migrations order by version`
  t.deepEqual(
    rows.map((r) => r.file),
    listMigrations(false).map((m) => m.file),
  )
  t.deepEqual(await migrate(sql), [])
})

test('two processes migrating a fresh database at once apply each file exactly once (advisory lock)', async (t) => {
  const db = await createTestDatabase()
  const admin = createSql(db.url, { max: 1 })
  await admin.unsafe('drop schema public cascade; create schema public')
  await admin.end()
  const a = createSql(db.url, { max: 2 })
  const b = createSql(db.url, { max: 2 })
  t.teardown(async () => {
    await a.end()
    await b.end()
    await db.drop()
  })
  const [ra, rb] = await Promise.all([migrate(a), migrate(b)])
  t.is(ra.length + rb.length, listMigrations(false).length)
  const [row] = await a`select count(*)::int as n from schema_migrations`
  t.is(row.n, listMigrations(false).length)
})

test('variants: .timescale.sql only with TimescaleDB, .plain.sql only without', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mig-'))
  for (const f of ['0001_accounts.sql', '0002_points.plain.sql', '0002_points.timescale.sql', '0003_more.sql', 'README.md'])
    writeFileSync(join(dir, f), '-- x\n')
  t.deepEqual(
    listMigrations(false, dir).map((m) => m.file),
    ['0001_accounts.sql', '0002_points.plain.sql', '0003_more.sql'],
  )
  t.deepEqual(
    listMigrations(true, dir).map((m) => m.file),
    ['0001_accounts.sql', '0002_points.timescale.sql', '0003_more.sql'],
  )
})

test('a failing migration is rolled back whole and named in the error', async (t) => {
  const db = await createTestDatabase()
  const sql = createSql(db.url, { max: 2 })
  t.teardown(async () => {
    await sql.end()
    await db.drop()
  })
  await sql`delete from schema_migrations where version = '0001'`
  // 0001 re-runs and fails on the existing tables; nothing of it may stay half-applied.
  const err = await t.throwsAsync(migrate(sql))
  t.regex(err!.message, /0001_accounts\.sql/)
  const [row] = await sql`select count(*)::int as n from schema_migrations where version = '0001'`
  t.is(row.n, 0)
})
