import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { createLogger } from '../../shared/log.js'
import { loadImportWork, recordProgress } from '../../shared/imports/repo.js'
import { chunkId, chunkOf, IMPORT_BATCH, runImport } from '../../shared/imports/run.js'
import { storeChunk } from '../../shared/imports/store.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { importPointsJob } from '../../workers/import-points.js'

// No workers here: the job is run by hand, as a crashed or re-run worker would run it.
const app = appSuite()

/** Uploads a long CSV of `points` rows (stats s0, s1, s2 in turn, one a second, value = row number) and leaves its job queued. */
async function queuedImport(points: number, value = (i: number) => `${i}`) {
  const base = Math.floor(Date.now() / 1000) - points - 600
  return queuedCsv(['stat,value,timestamp', ...Array.from({ length: points }, (_, i) => `s${i % 3},${value(i)},${base + i}`)].join('\n'))
}

async function queuedCsv(csv: string) {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'starter' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, '/api/v1/import/legacy', {
    method: 'POST',
    bearer: key,
    body: csv,
    headers: { 'content-type': 'text/csv' },
  })
  if (res.status !== 202) throw new Error(res.text)
  const id: string = res.body.import.id
  const [{ payload, stat_ids: statIds }] = await app.sql<
    { payload: Buffer; stat_ids: string[] }[]
  >`select payload, stat_ids from imports where id = ${id}`
  return { user, key, id, payload, statIds, csv }
}

/** What the account's stats hold besides the points: import keys, and minute aggregates waiting for the rollup refresh. */
async function records(accountId: string): Promise<{ ikeys: number; pending: number }> {
  const [r] = await app.sql<{ ikeys: number; pending: number }[]>`
    select (select count(*) from point_ikeys k join stats s on s.id = k.stat_id where s.account_id = ${accountId})::int as ikeys,
           (select coalesce(sum(p.count), 0) from rollup_pending p join stats s on s.id = p.stat_id where s.account_id = ${accountId})::int as pending`
  return r
}

async function count(accountId: string): Promise<number> {
  const [{ n }] = await app.sql<
    { n: number }[]
  >`select count(*)::int as n from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${accountId}`
  return n
}

const row = async (id: string) =>
  (
    await app.sql<{ status: string; points_done: number; points_skipped: number; error: string | null }[]>`
  select status, points_done, points_skipped, error from imports where id = ${id}`
  )[0]

test('a re-run import job stores nothing twice: batches already applied are skipped, and without their records the ikeys still hold', async (t) => {
  const { user, id, payload } = await queuedImport(25_000)
  t.deepEqual(await runImport(app.sql, id), { stored: 25_000, skipped: 0 })
  t.is(await count(user.accountId), 25_000)
  t.like(await row(id), { status: 'completed', points_done: 25_000 })

  // A re-run once completed (a duplicate job, a stalled lock) has nothing to do.
  t.deepEqual(await runImport(app.sql, id), { stored: 0, skipped: 0 })
  // A re-run of the same work (the worker died after storing, before recording completion): every batch is known.
  await app.sql`update imports set status = 'running', payload = ${payload} where id = ${id}`
  t.deepEqual(await runImport(app.sql, id), { stored: 0, skipped: 0 })
  // Even with the batch records gone, each point's idempotency key is already stored.
  await app.sql`update imports set status = 'running', payload = ${payload} where id = ${id}`
  await app.sql`delete from applied_batches where id like ${`import:${id}:%`}`
  t.deepEqual(await runImport(app.sql, id), { stored: 0, skipped: 25_000 })
  t.is(await count(user.accountId), 25_000)
})

test('a failing import job is retried, and its last failure leaves status failed with a clear error; what was stored stays consistent', async (t) => {
  const { user, key, id, payload } = await queuedImport(15_000)
  // The first batch is stored, then the rest of the work is unreadable (a truncated payload).
  const broken = Buffer.concat([payload.subarray(0, IMPORT_BATCH * 24), Buffer.from([1, 2, 3])])
  await app.sql`update imports set payload = ${broken} where id = ${id}`
  const deps = { config: app.config, sql: app.sql, log: createLogger({ logLevel: 'silent' }), queues: app.api.deps.queues }
  await t.throwsAsync(importPointsJob(deps as never, { import_id: id }, new Date(), { number: 1, final: false }))
  t.like(await row(id), { status: 'running', points_done: IMPORT_BATCH })
  await t.throwsAsync(importPointsJob(deps as never, { import_id: id }, new Date(), { number: 5, final: true }))
  const failed = await row(id)
  t.is(failed.status, 'failed')
  t.regex(failed.error ?? '', /^could not store the points: .+ \(attempt 5, the last\)$/)
  t.is(await count(user.accountId), IMPORT_BATCH, 'the batches stored stay stored, once')
  const res = await request(app.url, `/api/v1/import/legacy/${id}`, { bearer: key })
  t.is(res.body.import.status, 'failed')
  t.is(res.body.import.error, failed.error)
  // A later run with the work intact completes it without doubling the first batch.
  await app.sql`update imports set payload = ${payload} where id = ${id}`
  t.deepEqual(await runImport(app.sql, id), { stored: 15_000 - IMPORT_BATCH, skipped: 0 })
  t.is(await count(user.accountId), 15_000)
})

test('a retried import chunk stores nothing twice: again, at the same time, or the same rows under another chunk (another import)', async (t) => {
  const { user, id, payload, statIds } = await queuedImport(3_000)
  const first = chunkOf(payload, statIds, 0, 1_000)
  t.deepEqual(await storeChunk(app.sql, chunkId(id, 0), first), { applied: true, stored: 1_000, duplicates: 0 })
  t.deepEqual(await storeChunk(app.sql, chunkId(id, 0), first), { applied: false, stored: 0, duplicates: 0 }, 'a retry reports nothing')
  // Two runs of one chunk at once (a stalled job taken over while its first run is still storing): one stores it.
  const second = chunkOf(payload, statIds, 1_000, 2_000)
  const both = await Promise.all([storeChunk(app.sql, chunkId(id, 1), second), storeChunk(app.sql, chunkId(id, 1), second)])
  t.deepEqual(both.map((r) => r.stored).sort(), [0, 1_000])
  t.deepEqual(both.map((r) => r.applied).sort(), [false, true])
  // The same rows as another chunk id (a second import of them): every point's key is taken, nothing is stored.
  t.deepEqual(await storeChunk(app.sql, 'import:another:0', first), { applied: true, stored: 0, duplicates: 1_000 })
  t.is(await count(user.accountId), 2_000)
  t.deepEqual(
    await records(user.accountId),
    { ikeys: 2_000, pending: 2_000 },
    'one key and one aggregated point in rollup_pending per stored point',
  )
})

test('a crash between chunks resumes: chunks stored before it are skipped, the others stored, progress reaches completed', async (t) => {
  const { user, id, payload, statIds } = await queuedImport(25_000)
  // The worker ran three chunks at once: it stored chunks 0 and 2, recorded the progress of chunk 0 only, and died.
  await app.sql`update imports set status = 'running', started_at = now() where id = ${id}`
  t.true((await storeChunk(app.sql, chunkId(id, 0), chunkOf(payload, statIds, 0, IMPORT_BATCH))).applied)
  await recordProgress(app.sql, id, IMPORT_BATCH, 0)
  t.true((await storeChunk(app.sql, chunkId(id, 2), chunkOf(payload, statIds, 2 * IMPORT_BATCH, 25_000))).applied)
  t.like(await row(id), { status: 'running', points_done: IMPORT_BATCH })

  t.deepEqual(await runImport(app.sql, id), { stored: IMPORT_BATCH, skipped: 0 })
  t.like(await row(id), { status: 'completed', points_done: 25_000, points_skipped: 0, error: null })
  t.is(await count(user.accountId), 25_000)
  const [{ distinct }] = await app.sql<{ distinct: number }[]>`
    select count(distinct (s.id, p.ts, p.value))::int as distinct from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId}`
  t.is(distinct, 25_000, 'no row stored twice')
  t.deepEqual(await records(user.accountId), { ikeys: 25_000, pending: 25_000 })
})

// Serial (ava runs these first): its refresh folds every account's pending aggregates, which the other tests count.
test.serial(
  'rollups of imported points equal the aggregation of the points themselves (minute aggregates appended as the persist path does)',
  async (t) => {
    // Twenty points a minute per stat, values in eighths (sums exact in any order), some negative.
    const { user, id } = await queuedImport(12_000, (i) => `${(i % 997) / 8 - 30}`)
    t.deepEqual(await runImport(app.sql, id), { stored: 12_000, skipped: 0 })
    const raw = (width: string) => app.sql`
    select s.id as stat_id, date_bin(${width}::interval, p.ts, timestamptz 'epoch') as bucket, count(*)::int as count, sum(p.value) as sum, min(p.value) as min, max(p.value) as max
    from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId} group by 1, 2 order by 1, 2`
    const pending = await app.sql`
    select p.stat_id, p.bucket, sum(p.count)::int as count, sum(p.sum) as sum, min(p.min) as min, max(p.max) as max
    from rollup_pending p join stats s on s.id = p.stat_id where s.account_id = ${user.accountId} group by 1, 2 order by 1, 2`
    const minutes = await raw('1 minute')
    t.true(minutes.length >= 600)
    t.deepEqual([...pending], [...minutes])

    await refreshRollups(app.sql)
    const rollup = (table: string) => app.sql`
    select r.stat_id, r.bucket, r.count::int as count, r.sum, r.min, r.max from ${app.sql(table)} r join stats s on s.id = r.stat_id
    where s.account_id = ${user.accountId} order by 1, 2`
    t.deepEqual([...(await rollup('rollups_1m'))], [...minutes])
    t.deepEqual([...(await rollup('rollups_1h'))], [...(await raw('1 hour'))])
  },
)

test('a chunk PostgreSQL refuses stores nothing (no record, point, key or aggregate), and its retry stores it once', async (t) => {
  const { user, id, payload, statIds } = await queuedImport(1_000)
  const good = chunkOf(payload, statIds, 0, 1_000)
  const bad = { ...good, t: good.t.map((x, i) => (i === 700 ? 1e15 : x)) } // out of PostgreSQL's timestamp range
  await t.throwsAsync(storeChunk(app.sql, chunkId(id, 0), bad), { message: /timestamp out of range/ })
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from applied_batches where id = ${chunkId(id, 0)}`
  t.is(n, 0)
  t.is(await count(user.accountId), 0)
  t.deepEqual(await records(user.accountId), { ikeys: 0, pending: 0 })
  t.deepEqual(await storeChunk(app.sql, chunkId(id, 0), good), { applied: true, stored: 1_000, duplicates: 0 })
  t.deepEqual(await storeChunk(app.sql, chunkId(id, 0), good), { applied: false, stored: 0, duplicates: 0 })
  t.is(await count(user.accountId), 1_000)
})

test('a stat deleted during an import takes its points with it: the others are stored, the import completes', async (t) => {
  const { user, key, id } = await queuedImport(3_000)
  const del = await request(app.url, '/api/v1/stats/s1', { method: 'DELETE', bearer: key })
  t.true(del.status < 300, del.text)
  t.deepEqual(await runImport(app.sql, id), { stored: 2_000, skipped: 0 })
  t.like(await row(id), { status: 'completed', points_done: 3_000 })
  const perStat = await app.sql<{ name: string; n: number }[]>`
    select s.name, count(p.ts)::int as n from stats s left join lateral stat_points(s.id, '-infinity', 'infinity') p on true where s.account_id = ${user.accountId} group by 1 order by 1`
  t.deepEqual(
    perStat.map((r) => [r.name, r.n]),
    [
      ['s0', 1_000],
      ['s2', 1_000],
    ],
  )
  t.deepEqual(await records(user.accountId), { ikeys: 2_000, pending: 2_000 })
})

test('the key the job stores for each point is the one the preview looks up, for values of every form (exponents, long fractions)', async (t) => {
  const values = ['1e15', '1.5e-7', '0.30000000000000004', '123456789.123', '-2.5', '-1e-300', '999999999999999.9', '-0', '0', '42']
  const n = Math.floor(Date.now() / 1000) - 300
  const csv = ['stat,value,timestamp', ...values.map((v) => `g,${v},${n}`), `g,42,${n}`].join('\n')
  const { user, key, id } = await queuedCsv(csv)
  t.deepEqual(await runImport(app.sql, id), { stored: 11, skipped: 0 })
  const stored = await app.sql<
    { value: number }[]
  >`select p.value from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId}`
  t.deepEqual(
    stored.map((r) => r.value).sort((a, b) => a - b),
    [...values.map(Number).map((v) => (v === 0 ? 0 : v)), 42].sort((a, b) => a - b),
  )
  t.false(
    stored.some((r) => Object.is(r.value, -0)),
    '-0 is stored as 0, as the ingest rules store it',
  )
  const again = await request(app.url, '/api/v1/import/legacy?dryRun=1', {
    method: 'POST',
    bearer: key,
    body: csv,
    headers: { 'content-type': 'text/csv' },
  })
  t.is(again.status, 200, again.text)
  t.is(again.body.points_duplicate, 11)
  t.is(again.body.points_accepted, 0)
})

test('the packed points are stored uncompressed and read back byte for byte (base64 both ways)', async (t) => {
  const { id, payload, statIds } = await queuedImport(20_000)
  t.is(payload.length, 20_000 * 24)
  const [{ stored }] = await app.sql<{ stored: number }[]>`select pg_column_size(payload) as stored from imports where id = ${id}`
  t.true(stored >= payload.length, `stored in ${stored} bytes: compressed`)
  const work = await loadImportWork(app.sql, id)
  t.true(work!.payload!.equals(payload))
  t.deepEqual(work!.stat_ids, statIds)
})
