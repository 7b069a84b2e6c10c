// A small forward-only migration runner: numbered .sql files in sql/, one
// transaction per file, recorded in schema_migrations, serialised across
// processes by an advisory lock so two `release` phases cannot race.
//
// Variants: `NNNN_name.timescale.sql` runs only where TimescaleDB is available,
// `NNNN_name.plain.sql` only where it is not; both record the same version.
// A file whose first line is `-- migrate:no-transaction` runs outside a
// transaction (TimescaleDB refuses some statements inside one).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Sql } from './db.js'

type ReservedSql = Awaited<ReturnType<Sql['reserve']>>

const LOCK_ID = 72_410_001 // arbitrary, fixed: the migration lock of this project

export interface Migration {
  version: string
  file: string
  sql: string
  transactional: boolean
}

/** The sql/ folder, found from this file whether it runs from source or from dist/. */
export function sqlDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'sql', '0001_accounts.sql'))) return join(dir, 'sql')
    dir = dirname(dir)
  }
  throw new Error('sql/ migrations folder not found')
}

/** Lists the migrations that apply to a server with or without TimescaleDB, in order. */
export function listMigrations(timescale: boolean, dir = sqlDir()): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+(\.(timescale|plain))?\.sql$/.test(f))
    .filter((f) => (f.endsWith('.timescale.sql') ? timescale : f.endsWith('.plain.sql') ? !timescale : true))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8')
      return { version: file.slice(0, 4), file, sql: text, transactional: !text.startsWith('-- migrate:no-transaction') }
    })
}

/** Whether the server offers the TimescaleDB extension. */
export async function timescaleAvailable(sql: Sql | ReservedSql): Promise<boolean> {
  const rows = await sql`select 1 from pg_available_extensions where name = 'timescaledb'`
  return rows.length > 0
}

/** Applies every pending migration; returns the files applied. Safe to run from several processes at once. */
export async function migrate(sql: Sql, log: (line: string) => void = () => {}): Promise<string[]> {
  const conn = await sql.reserve()
  const applied: string[] = []
  try {
    await conn`select pg_advisory_lock(${LOCK_ID})`
    await conn`create table if not exists schema_migrations (
      version text primary key, file text not null, applied_at timestamptz not null default now())`
    const timescale = await timescaleAvailable(conn)
    if (timescale) await conn`create extension if not exists timescaledb`
    const done = new Set((await conn<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version))
    for (const m of listMigrations(timescale)) {
      if (done.has(m.version)) continue
      if (m.transactional) await conn.unsafe('begin')
      try {
        await conn.unsafe(m.sql).simple()
        await conn`insert into schema_migrations (version, file) values (${m.version}, ${m.file})`
        if (m.transactional) await conn.unsafe('commit')
      } catch (err) {
        if (m.transactional) await conn.unsafe('rollback').catch(() => {})
        throw new Error(`migration ${m.file} failed: ${(err as Error).message}`)
      }
      applied.push(m.file)
      log(`applied ${m.file}`)
    }
  } finally {
    await conn`select pg_advisory_unlock(${LOCK_ID})`.catch(() => {})
    conn.release()
  }
  return applied
}

/** Creates the database a URL names when it does not exist yet (development convenience). */
export async function ensureDatabase(adminSql: Sql, name: string): Promise<boolean> {
  const rows = await adminSql`select 1 from pg_database where datname = ${name}`
  if (rows.length) return false
  await adminSql.unsafe(`create database "${name.replace(/"/g, '""')}"`)
  return true
}
