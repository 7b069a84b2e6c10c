// A point PostgreSQL refuses must not take the
// points beside it down. The failing job is split until the refused point is
// alone; every good point is stored exactly once and the refused one is parked
// where an operator sees it (log line, health detail, CLI listing).
import test from 'ava'
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { promisify } from 'node:util'
import { packPoints, type QueuedPoint } from '../../shared/jobs.js'
import { isDataError } from '../../shared/points/parked.js'
import { applyBatch, applyIsolating } from '../../shared/points/repo.js'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite()

async function newStats(n: number): Promise<string[]> {
  const user = await signUp(app.url)
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const [row] = await app.sql<
      { id: string }[]
    >`insert into stats (account_id, name, kind) values (${user.accountId}, ${`s${randomUUID().slice(0, 8)}`}, 'counter') returning id`
    ids.push(row.id)
  }
  return ids
}

const storedPerStat = async (ids: string[]) => {
  const rows = await app.sql<
    { stat_id: string; n: number }[]
  >`select s.id as stat_id, count(*)::int as n from unnest(${ids}::uuid[]) as s(id)
    cross join lateral stat_points(s.id, '-infinity', 'infinity') p group by 1`
  return Object.fromEntries(ids.map((id) => [id, rows.find((r) => r.stat_id === id)?.n ?? 0]))
}

const T0 = 1_700_000_000
const NUL_IKEY = 'k\u0000x' // PostgreSQL: invalid byte sequence for encoding "UTF8": 0x00 (22021)
const FAR_T = 9_000_000_000_000_000 // a safe integer, but beyond timestamptz: timestamp out of range (22008)

test.serial(
  'item 1: refused points planted among hundreds of good ones from several accounts: every good one stored once, the bad ones parked',
  async (t) => {
    const workers = await app.startWorkers()
    try {
      const stats = [...(await newStats(2)), ...(await newStats(2)), ...(await newStats(2))] // three accounts
      const expected: Record<string, number> = Object.fromEntries(stats.map((s) => [s, 0]))
      const jobs: QueuedPoint[][] = []
      for (let j = 0; j < 6; j++) {
        const points: QueuedPoint[] = []
        for (let i = 0; i < 100; i++) {
          const stat = stats[(i + j) % stats.length]
          // Some good points carry ikeys, so the bad job takes the ikey path with good keyed points beside the bad one.
          points.push([stat, T0 + j * 1000 + i, i, i % 3 === 0 ? `ok-${j}-${i}` : null])
          expected[stat]++
        }
        jobs.push(points)
      }
      jobs[2].splice(57, 0, [stats[0], T0 + 5, 1, NUL_IKEY]) // the attacker's point, in the middle of other accounts' points
      jobs[4].splice(13, 0, [stats[3], FAR_T, 1, null]) // a refusal on the path without ikeys
      const queues = app.api.deps.queues
      // Added together, so that the worker commits them as one group and the group fails as a whole first.
      await Promise.all(
        jobs.map((points) => {
          const id = randomUUID()
          return queues.enqueue('persist-points', { batch_id: id, stats: packPoints(points) }, { jobId: id })
        }),
      )

      const queue = queues.get('ingest')
      const deadline = Date.now() + 20_000
      let counts: Record<string, number> = {}
      while (Date.now() < deadline) {
        counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized')
        if (Object.values(counts).every((n) => n === 0)) break
        await new Promise((r) => setTimeout(r, 100))
      }
      t.deepEqual(
        { ...counts, paused: undefined },
        { waiting: 0, active: 0, delayed: 0, failed: 0, prioritized: 0, paused: undefined },
        'every job completed on its first run, none retried or failed',
      )
      t.deepEqual(await storedPerStat(stats), expected, 'all 600 good points stored, each exactly once')

      const parked = await app.sql<
        { stat_id: string; point: string; code: string; reason: string }[]
      >`select stat_id, point, code, reason from parked_points order by code`
      t.deepEqual(
        parked.map((p) => [p.stat_id, p.code]),
        [
          [stats[3], '22008'],
          [stats[0], '22021'],
        ],
      )
      t.deepEqual(JSON.parse(parked[1].point), [stats[0], T0 + 5, 1, NUL_IKEY], 'the refused point is kept as sent')
      t.regex(parked[1].reason, /0x00/)
      t.regex(parked[0].reason, /out of range/)

      const lines = app.logs.filter((l) => l.includes('point parked'))
      t.is(lines.length, 2, 'one error line per parked point')
      t.is(JSON.parse(lines[0]).level, 'error')

      const health = await request(app.url, '/api/v1/health')
      t.is(health.status, 200, 'parked points do not fail the health check')
      t.is(health.body.parked_points.count, 2)
      t.truthy(health.body.parked_points.last_parked_at)

      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'shared/cli.ts', 'points:parked', '--limit', '10'],
        {
          env: { ...process.env, DATABASE_URL: app.config.databaseUrl, LOG_LEVEL: 'error' },
        },
      )
      const listed = JSON.parse(stdout).parked_points
      t.is(listed.length, 2)
      t.truthy(
        listed.every(
          (p: { account_email: string; stat_name: string; reason: string }) => p.account_email.includes('@') && p.stat_name && p.reason,
        ),
      )
      t.deepEqual(listed.map((p: { point: QueuedPoint }) => p.point[3]).sort(), [NUL_IKEY, null].sort())
    } finally {
      await workers.close()
    }
  },
)

test('item 1: an isolated batch is still applied exactly once (a re-run stores nothing twice), ikey duplicates still lose', async (t) => {
  const [a, b] = await newStats(2)
  const id = randomUUID()
  const points: QueuedPoint[] = [
    [a, T0, 1, 'same'],
    [a, T0, 2, 'same'], // first write wins, across the halves the split makes
    ...Array.from({ length: 40 }, (_, i): QueuedPoint => [b, T0 + i, i, null]),
    [b, T0, 1, '\u0000'],
    [a, T0 + 1, 3, null],
  ]
  await t.throwsAsync(applyBatch(app.sql, id, points), { message: /0x00/ }, 'the batch as a whole is refused')
  const first = await applyIsolating(app.sql, { id, points })
  t.is(first.stored, 42)
  t.is(first.duplicates, 1)
  t.is(first.parked.length, 1)
  const again = await applyIsolating(app.sql, { id, points })
  t.deepEqual(again, { applied: [], stored: 0, duplicates: 0, parked: [] })
  t.deepEqual(await storedPerStat([a, b]), { [a]: 2, [b]: 40 })
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from parked_points where batch_id = ${id}`
  t.is(n, 1, 'parked once')
})

test('item 1: only refusals of the data count as data errors; a lost connection is retried, not parked', (t) => {
  t.true(isDataError({ code: '22021' }))
  t.true(isDataError({ code: '23505' }))
  for (const code of ['CONNECTION_CLOSED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', '08006', '57P01', '40001', '53300', undefined])
    t.false(isDataError({ code }), String(code))
  t.false(isDataError(null))
})
