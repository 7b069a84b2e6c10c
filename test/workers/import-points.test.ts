import test from 'ava'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { createLogger } from '../../shared/log.js'
import { IMPORT_BATCH, runImport } from '../../shared/imports/run.js'
import { importPointsJob } from '../../workers/import-points.js'

// No workers here: the job is run by hand, as a crashed or re-run worker would run it.
let app: TestApp
test.before(async () => {
  app = await startTestApp()
})
test.after.always(() => app?.close())

async function queuedImport(points: number) {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'starter' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const base = Math.floor(Date.now() / 1000) - points - 600
  const csv = ['stat,value,timestamp', ...Array.from({ length: points }, (_, i) => `s${i % 3},${i},${base + i}`)].join('\n')
  const res = await request(app.url, '/api/v1/import/legacy', { method: 'POST', bearer: key, body: csv, headers: { 'content-type': 'text/csv' } })
  if (res.status !== 202) throw new Error(res.text)
  const id: string = res.body.import.id
  const [{ payload }] = await app.sql<{ payload: Buffer }[]>`select payload from imports where id = ${id}`
  return { user, key, id, payload }
}

async function count(accountId: string): Promise<number> {
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from points p join stats s on s.id = p.stat_id where s.account_id = ${accountId}`
  return n
}

const row = async (id: string) => (await app.sql<{ status: string; points_done: number; points_skipped: number; error: string | null }[]>`
  select status, points_done, points_skipped, error from imports where id = ${id}`)[0]

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
