// The bench's own database and Redis prefix: created fresh, torn down at the end.
import { randomBytes } from 'node:crypto'
import { signUp } from '../shared/accounts/service.js'
import { createApiKey } from '../shared/auth/api-keys.js'
import { createSql, withDatabase, type Sql } from '../shared/db.js'
import { migrate } from '../shared/migrate.js'
import { createRedis } from '../shared/redis.js'

// BENCH_DB names another, so that two checkouts on one PostgreSQL server never drop each other's database.
export const DB_NAME = process.env.BENCH_DB || 'metrics_bench'

export interface BenchEnv {
  databaseUrl: string
  redisUrl: string
  redisPrefix: string
  sql: Sql
}

/** The server: DATABASE_URL's, or the local default; the bench always uses its own database on it. */
export function serverUrl(): string {
  return process.env.DATABASE_URL || 'postgres://localhost/postgres'
}

/** Throws unless the URL names this machine: the benches only ever touch a local PostgreSQL and Redis. */
export function assertLocal(url: string, what: string): void {
  const host = new URL(url).hostname
  if (!['localhost', '127.0.0.1', '[::1]', '::1', ''].includes(host)) throw new Error(`${what} must point at this machine, got ${host}`)
}

/** Where a bench's database and Redis keys go: both on this machine (checked), the Redis prefix fresh. */
export function localTarget(dbName: string, prefixLabel: string, prefixBytes = 4): Omit<BenchEnv, 'sql'> {
  const base = serverUrl()
  assertLocal(base, 'DATABASE_URL')
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
  assertLocal(redisUrl, 'REDIS_URL')
  return { databaseUrl: withDatabase(base, dbName), redisUrl, redisPrefix: `${prefixLabel}${randomBytes(prefixBytes).toString('hex')}` }
}

/** Runs the queries in turn on one connection to the server's `postgres` database (create, drop). */
export async function adminQuery(...queries: string[]): Promise<void> {
  const admin = createSql(withDatabase(serverUrl(), 'postgres'), { max: 1, applicationName: 'metrics-bench-admin' })
  try {
    for (const q of queries) await admin.unsafe(q)
  } finally {
    await admin.end({ timeout: 2 })
  }
}

export function dropDatabase(dbName: string): Promise<void> {
  return adminQuery(`drop database if exists "${dbName}" with (force)`)
}

/** Drops and recreates the database, connects to it and migrates it. */
export async function createMigratedDatabase(databaseUrl: string, dbName: string, applicationName: string): Promise<Sql> {
  await adminQuery(`drop database if exists "${dbName}" with (force)`, `create database "${dbName}"`)
  const sql = createSql(databaseUrl, { max: 4, applicationName, statementTimeoutSeconds: 0 })
  try {
    await migrate(sql)
  } catch (err) {
    await sql.end({ timeout: 2 }).catch(() => {})
    throw err
  }
  return sql
}

export async function createBenchDatabase(): Promise<BenchEnv> {
  const target = localTarget(DB_NAME, 'bench', 5)
  const sql = await createMigratedDatabase(target.databaseUrl, DB_NAME, 'metrics-bench')
  return { ...target, sql }
}

/** Deletes every Redis key under the prefix; returns how many. */
export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = createRedis({ redisUrl })
  let deleted = 0
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000)
      if (keys.length) deleted += await redis.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
  return deleted
}

export interface BenchAccount {
  id: string
  email: string
  key: string
}

/** A business-plan account (100M points/day, 2,000 req/s, burst 10,000) with one API key; its email is <label>@bench.invalid. */
export async function createAccount(sql: Sql, label: string): Promise<BenchAccount> {
  const email = `${label}@bench.invalid`
  const account = await signUp(sql, email, null, 'business')
  const { secret } = await createApiKey(sql, account.id, 'bench')
  return { id: account.id, email, key: secret }
}

/** Business-plan accounts, one API key each. */
export async function createAccounts(sql: Sql, n: number, label: string): Promise<BenchAccount[]> {
  const out: BenchAccount[] = []
  for (let i = 0; i < n; i++) out.push(await createAccount(sql, `${label}-${i}`))
  return out
}

/** Rows stored in `points` for stats whose name starts with the prefix (the service's tables). */
export async function countPoints(sql: Sql, namePrefix: string): Promise<{ rows: number; sum: number }> {
  const [r] = await sql<{ rows: number; sum: number }[]>`
    select count(*)::int as rows, coalesce(sum(p.value), 0)::float8 as sum
    from points p where p.stat_id in (select id from stats where name like ${`${namePrefix}%`})`
  return r
}

export interface DrainResult {
  rows: number
  sum: number
  expected: number
  /** Epoch ms of the poll that first saw the final count. */
  lastStoredAt: number
  /** Whether the count reached the expected number (false: stalled or timed out). */
  complete: boolean
  waitedMs: number
}

/**
 * Polls the stored count after a load stage until it reaches `expected`, or
 * stops growing for stallMs, or capMs passed. The time of the poll that first
 * saw the final count stands for "the last point stored".
 */
export async function waitForDrain(
  sql: Sql,
  namePrefix: string,
  expected: number,
  opts: { pollMs?: number; stallMs?: number; capMs?: number } = {},
): Promise<DrainResult> {
  const pollMs = opts.pollMs ?? 100
  const stallMs = opts.stallMs ?? 10_000
  const capMs = opts.capMs ?? 60_000
  const started = Date.now()
  let last = { rows: -1, sum: 0 }
  let lastChangeAt = started
  for (;;) {
    const now = Date.now()
    const c = await countPoints(sql, namePrefix)
    if (c.rows !== last.rows) {
      last = c
      lastChangeAt = now
    }
    if (c.rows >= expected) return { ...c, expected, lastStoredAt: now, complete: true, waitedMs: now - started }
    if (now - lastChangeAt > stallMs || now - started > capMs) {
      return { ...last, expected, lastStoredAt: lastChangeAt, complete: false, waitedMs: now - started }
    }
    await new Promise((r) => setTimeout(r, pollMs))
  }
}

export interface DbActivity {
  xactCommit: number
  xactRollback: number
  /** Per table: sequential and index scans, rows inserted/updated/deleted. */
  tables: Record<string, { seqScan: number; idxScan: number; ins: number; upd: number; del: number }>
}

/** PostgreSQL's own counters for the bench database (the statistics lag by up to a second). */
export async function dbActivity(sql: Sql): Promise<DbActivity> {
  const [db] = await sql<{ c: number; r: number }[]>`
    select xact_commit::float8 as c, xact_rollback::float8 as r from pg_stat_database where datname = current_database()`
  const rows = await sql<{ relname: string; s: number; i: number; ins: number; upd: number; del: number }[]>`
    select relname, coalesce(seq_scan, 0)::float8 as s, coalesce(idx_scan, 0)::float8 as i,
           n_tup_ins::float8 as ins, n_tup_upd::float8 as upd, n_tup_del::float8 as del
    from pg_stat_user_tables`
  return {
    xactCommit: db.c,
    xactRollback: db.r,
    tables: Object.fromEntries(rows.map((r) => [r.relname, { seqScan: r.s, idxScan: r.i, ins: r.ins, upd: r.upd, del: r.del }])),
  }
}

/** What happened between two snapshots; tables with no activity are left out. */
export function activityDelta(a: DbActivity, b: DbActivity): DbActivity {
  const tables: DbActivity['tables'] = {}
  for (const [name, t] of Object.entries(b.tables)) {
    const o = a.tables[name] ?? { seqScan: 0, idxScan: 0, ins: 0, upd: 0, del: 0 }
    const d = { seqScan: t.seqScan - o.seqScan, idxScan: t.idxScan - o.idxScan, ins: t.ins - o.ins, upd: t.upd - o.upd, del: t.del - o.del }
    if (d.seqScan || d.idxScan || d.ins || d.upd || d.del) tables[name] = d
  }
  return { xactCommit: b.xactCommit - a.xactCommit, xactRollback: b.xactRollback - a.xactRollback, tables }
}
