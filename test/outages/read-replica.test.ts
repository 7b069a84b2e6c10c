// Read replica (docs/decisions.md §22): lag-tolerant reads go to a PostgreSQL streaming replica named by
// DATABASE_READ_URL; a lagging or stopped replica is bypassed (reads answered from the primary), with one log
// line per change and its state in health, and is used again once fit. Against a primary and a real streaming
// replica of the test's own (test/helpers/pg-replica.ts).
import test from 'ava'
import { createSql } from '../../shared/db.js'
import { exportCsv } from '../../shared/export/stream.js'
import type { ExportWindow } from '../../shared/export/window.js'
import { compactDay } from '../../shared/points/compaction.js'
import { ReadPool } from '../../shared/read-replica.js'
import type { Stat } from '../../shared/stats/repo.js'
import type { TestApp } from '../helpers/app.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startPrimaryWithReplica, type PrimaryWithReplica } from '../helpers/pg-replica.js'
import { settle } from '../helpers/storage.js'

let pg: PrimaryWithReplica
let key: string
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test.before(async () => {
  pg = await startPrimaryWithReplica()
})
// A lag limit no test reaches: this app keeps reading from a held-back replica, which shows where reads go.
const app = appSuite({
  workers: true,
  env: () => ({ DATABASE_URL: pg.primaryUrl, DATABASE_READ_URL: pg.replicaUrl, READ_REPLICA_MAX_LAG_SECONDS: '3600' }),
})
test.before(async () => {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  ;({ key } = await createKey(app.url, user))
})
test.serial.after.always(() => pg?.destroy())

/** The values the raw export of a stat holds (the export reads through the read pool). */
async function exported(base: string, stat: string): Promise<number[]> {
  const res = await request(base, `/api/v1/export?stat=${stat}&format=json&range=7d`, { bearer: key })
  if (res.status !== 200) throw new Error(`export answered ${res.status}: ${JSON.stringify(res.body)}`)
  const body = typeof res.body === 'string' ? JSON.parse(res.body) : res.body
  return (
    JSON.stringify(body)
      .match(/"value":(-?[\d.]+)/g)
      ?.map((m) => Number(m.slice(8))) ?? []
  )
}

async function write(stat: string, value: number): Promise<void> {
  const res = await request(app.url, `/api/v1/stats/${stat}/value`, {
    json: { value, t: Math.floor(Date.now() / 1000) - 60 + value },
    bearer: key,
  })
  if (res.status !== 200) throw new Error(`write answered ${res.status}`)
  await settle(app)
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (ok(v)) return v
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)} after ${timeoutMs} ms`)
    await sleep(200)
  }
}

const replicaState = async (a: TestApp) => (await request(a.url, '/api/v1/health')).body.read_replica

test.serial('reads go to the replica while it is fit: a held-back replica answers the export without the newest point', async (t) => {
  await write('replica.routing', 1)
  await write('replica.deleted', 1)
  await until(
    'replica in use',
    () => replicaState(app),
    (s) => s.state === 'in_use',
  )
  t.deepEqual(
    await until(
      'the replica has the first points',
      async () => [...(await exported(app.url, 'replica.routing')), ...(await exported(app.url, 'replica.deleted'))],
      (v) => v.length === 2,
    ),
    [1, 1],
  )
  await pg.pauseReplay()
  try {
    await write('replica.routing', 2)
    const [{ n }] = await app.sql<
      { n: number }[]
    >`select count(*)::int as n from points p join stats s on s.id = p.stat_id where s.name = 'replica.routing'`
    t.is(n, 2, 'the primary holds both points')
    t.deepEqual(
      await exported(app.url, 'replica.routing'),
      [1],
      'the export was read on the replica, which has not replayed the second point',
    )
    const chart = await request(app.url, '/api/v1/stats/replica.routing?range=1h', { bearer: key })
    t.deepEqual(
      chart.body.points.map((p: { value: number }) => p.value),
      [1],
      'the chart was read on the replica too',
    )
    // The stat itself is looked up on the primary: one deleted there is gone from its chart, though the replica holds it.
    t.is((await request(app.url, '/api/v1/stats/replica.deleted', { bearer: key, method: 'DELETE' })).status, 204)
    t.is((await request(app.url, '/api/v1/stats/replica.deleted?range=1h', { bearer: key })).status, 404)
    // A read that must see the caller's own latest write goes to the primary: the stat record and its kind.
    const stat = await request(app.url, '/api/v1/stats', { bearer: key })
    t.true(stat.body.stats.some((s: { name: string }) => s.name === 'replica.routing'))

    // An app with a 1 s lag limit: the replica, held back while the primary writes, is bypassed.
    const strict = await app.another({ DATABASE_URL: pg.primaryUrl, DATABASE_READ_URL: pg.replicaUrl, READ_REPLICA_MAX_LAG_SECONDS: '1' })
    await until(
      'the strict app uses the replica',
      () => replicaState(strict),
      (s) => s.state === 'in_use' || s.state === 'lagging',
    )
    await write('replica.routing', 3)
    const lagging = await until(
      'the replica counted as lagging',
      () => replicaState(strict),
      (s) => s.state === 'lagging',
    )
    t.true(lagging.lag_s >= 1, `lag ${lagging.lag_s} s (shown to a tenth: 1.04 s past the limit reads 1)`)
    t.regex(lagging.reason, /behind the primary \(limit 1 s\)/)
    t.deepEqual(await exported(strict.url, 'replica.routing'), [1, 2, 3], 'bypassed: the export reads the primary')
    t.is((await request(strict.url, '/api/v1/health')).status, 200, 'a bypassed replica does not fail health')

    await pg.resumeReplay()
    await until(
      'the strict app uses the replica again',
      () => replicaState(strict),
      (s) => s.state === 'in_use',
    )
    t.deepEqual(await exported(strict.url, 'replica.routing'), [1, 2, 3])
    const lines = strict.logs.filter((l) => /read replica/.test(l)).map((l) => JSON.parse(l).message as string)
    t.deepEqual(
      lines.map((m) => m.split(':')[0]),
      ['read replica in use', 'read replica bypassed, reads go to the primary', 'read replica in use'],
      'one line per change',
    )
  } finally {
    await pg.resumeReplay().catch(() => {})
  }
})

test.serial('a stopped replica is bypassed, reads are answered throughout, and it is used again once it is back', async (t) => {
  await until(
    'replica in use',
    () => replicaState(app),
    (s) => s.state === 'in_use',
  )
  const before = app.logs.length
  await pg.stopReplica()
  // Reads right after the stop, before any check has noticed: each is run again on the primary.
  for (let i = 0; i < 5; i++) {
    t.deepEqual(await exported(app.url, 'replica.routing'), [1, 2, 3])
    t.is((await request(app.url, '/api/v1/stats/replica.routing?range=24h', { bearer: key })).status, 200)
  }
  const down = await until(
    'the replica counted as unreachable',
    () => replicaState(app),
    (s) => s.state === 'unreachable',
  )
  t.truthy(down.reason)
  await write('replica.routing', 4)
  t.deepEqual(await exported(app.url, 'replica.routing'), [1, 2, 3, 4])

  await pg.startReplica()
  await until(
    'the replica in use again',
    () => replicaState(app),
    (s) => s.state === 'in_use',
  )
  t.deepEqual(
    await until(
      'the replica caught up',
      () => exported(app.url, 'replica.routing'),
      (v) => v.length === 4,
    ),
    [1, 2, 3, 4],
  )
  const lines = app.logs
    .slice(before)
    .filter((l) => /read replica/.test(l))
    .map((l) => JSON.parse(l).message as string)
  t.is(lines.length, 2, `one line for the loss and one for the return: ${JSON.stringify(lines)}`)
  t.regex(lines[0], /^read replica bypassed/)
  t.regex(lines[1], /^read replica in use/)
})

test.serial(
  'the replica stopped mid-export: the pages left are read from the primary, from the last row sent, every row once',
  async (t) => {
    // A read pool of the test's own (no lag limit reached), read page by page as the route does,
    // so that the stop falls between two pages for certain; the pool's own connections are the ones cut.
    const lines: string[] = []
    const log = { info: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(m) }
    const reads = new ReadPool({ databaseReadUrl: pg.replicaUrl, readReplicaMaxLagSeconds: 3600 }, app.sql, log as never)
    const replica = createSql(pg.replicaUrl, { max: 1 })
    try {
      const [{ account_id: accountId }] = await app.sql<
        { account_id: string }[]
      >`select account_id from stats where name = 'replica.routing'`
      const [stat] = await app.sql<
        Stat[]
      >`insert into stats (account_id, name, kind) values (${accountId}, 'replica.export', 'gauge') returning *`
      const day = Math.floor(Date.now() / 86_400_000) * 86_400 - 3 * 86_400
      // Three days of 250 points each (one a minute from 00:10), compacted or not: pages of 100 rows cut each day.
      await app.sql`insert into points (stat_id, ts, value)
      select ${stat.id}, to_timestamp(${day} + d * 86400 + 600 + i * 60), d * 1000 + i from generate_series(0, 2) d, generate_series(0, 249) i`
      await compactDay(app.sql, stat.id, new Date((day + 86_400) * 1000))
      await until(
        'the replica holds the points',
        async () =>
          (await replica<{ n: number }[]>`select count(*)::int as n from stat_points(${stat.id}, ${new Date(day * 1000)}, now())`)[0].n,
        (n) => n === 750,
      )
      await until(
        'the pool uses the replica',
        async () => reads.health().state,
        (s) => s === 'in_use',
      )
      // Held back, the replica lacks two points the primary takes now: one before the first page's last row (read from
      // the replica, so never exported) and one on the last day (read from the primary once the replica is gone).
      await pg.pauseReplay()
      await app.sql`insert into points (stat_id, ts, value) values (${stat.id}, to_timestamp(${day}), -1), (${stat.id}, to_timestamp(${day + 2 * 86_400 + 30}), -2)`
      const w: ExportWindow = { requested: 'custom', from: new Date(day * 1000), to: new Date(), retentionDays: 800, clamped: false }
      const got: string[] = []
      let pages = 0
      for await (const chunk of exportCsv(reads, [stat], w, 100)) {
        got.push(
          ...String(chunk)
            .split('\n')
            .filter((l) => l.startsWith('replica.export,')),
        )
        if (++pages === 2) await pg.stopReplica() // the header, then the first page: the replica stops here
      }
      t.true(
        lines.some((l) => /^read replica bypassed/.test(l)),
        `the pool found the replica gone: ${JSON.stringify(lines)}`,
      )
      const values = got.map((l) => Number(l.split(',')[4]))
      const want = [0, 1, 2].flatMap((d) => Array.from({ length: 250 }, (_, i) => d * 1000 + i))
      want.splice(500, 0, -2) // 00:00:30 of the last day, before its first point
      t.deepEqual(
        values,
        want,
        'every row once, in order: the first page from the replica (without -1), the rest from the primary (with -2)',
      )
      const times = got.map((l) => Number(l.split(',')[2]))
      t.true(times.every((x, i) => i === 0 || times[i - 1] < x))
    } finally {
      await reads.close()
      await replica.end({ timeout: 1 })
      await pg.startReplica()
      await pg.resumeReplay().catch(() => {})
    }
  },
)
