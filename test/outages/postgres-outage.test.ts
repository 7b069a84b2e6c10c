// PostgreSQL stopped under a running API and worker, long
// enough for every pool slot to fail to connect, then started again: both
// serve again within seconds, without a restart, and every accepted point is
// stored exactly once. Runs against a PostgreSQL of its own.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js'
import { settle } from '../helpers/storage.js'

let pg: OwnPostgres
test.before(async () => {
  pg = await startOwnPostgres()
})
const app = appSuite({ env: () => ({ DATABASE_URL: pg.url }) })
test.serial.after.always(() => pg?.destroy())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function waitFor(what: string, ok: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now()
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(50)
  }
  return Date.now() - started
}

test('after PostgreSQL was down, web and worker serve again within seconds; accepted points stored once', async (t) => {
  t.timeout(60_000)
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const base = Math.floor(Date.now() / 1000) - 3600
  let n = 0
  const accepted: number[] = []
  const statuses = new Map<number, number>()
  // Each write is one gauge point with its own second and value, so that what is stored can be matched one to one.
  const write = async (stat: string) => {
    const i = n++
    const res = await request(app.url, `/api/v1/stats/${stat}/value`, { json: { value: i, t: base + i }, bearer: key })
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    if (res.status === 200) accepted.push(i)
    return res
  }
  // Points accepted before the outage and still queued: the worker, started once PostgreSQL is gone, cannot store them yet.
  for (let i = 0; i < 20; i++) t.is((await write('g')).status, 200)

  await pg.stop()
  const downAt = Date.now()
  await app.startWorkers()
  // Requests during the outage: many health checks at once (a query each), so that every connection of the API's
  // pool fails to connect, and writes (whose key or stat PostgreSQL must confirm).
  const checks = await Promise.all(Array.from({ length: 30 }, () => request(app.url, '/api/v1/health')))
  t.true(checks.every((c) => c.status === 503 && c.body.failing.join() === 'postgres'))
  await Promise.all(Array.from({ length: 20 }, (_, i) => write(i % 2 ? 'g' : `new${i}`)))
  t.true(Date.now() - downAt < 15_000, 'requests during the outage were answered, not left hanging')
  await sleep(Math.max(0, 4000 - (Date.now() - downAt)))
  const pending = await app.api.deps.queues.get('ingest').getJobCounts('waiting', 'active', 'delayed')
  t.true(pending.waiting + pending.active + pending.delayed > 0, 'the worker could not store the queued points')
  await pg.start()

  const healthy = await waitFor('health 200', async () => (await request(app.url, '/api/v1/health')).status === 200, 10_000)
  t.log(`health ok ${healthy} ms after PostgreSQL started`)
  await waitFor('a new stat written', async () => (await write(`after${n}`)).status === 200, 10_000)
  for (let i = 0; i < 10; i++) t.is((await write('g')).status, 200)

  // The worker stores what was queued during the outage, and the rest, within seconds.
  await settle(app, 15_000)
  const rows = await app.sql<{ value: number }[]>`
    select p.value from points p join stats s on s.id = p.stat_id where s.account_id = ${user.accountId} order by p.value`
  const stored = rows.map((r) => r.value)
  t.deepEqual(
    stored,
    [...accepted].sort((a, b) => a - b),
    'every accepted point stored, exactly once, and nothing else',
  )
  t.log(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}; accepted ${accepted.length}, stored ${stored.length}`)
  // Refused writes were a dependency being down: 503, never a masked 500.
  t.deepEqual([...statuses.keys()].sort(), [200, 503])
  // One warning per outage per process (the API and the worker share this log), one line when it is back; no stacks.
  const parse = () => app.logs.map((l) => JSON.parse(l) as { level: string; message: string })
  // Recovery is noticed by a probe once a second in each process: give the slower one its moment.
  for (let i = 0; i < 50 && parse().filter((l) => l.message === 'PostgreSQL available again').length < 2; i++)
    await new Promise((r) => setTimeout(r, 100))
  const lines = parse()
  t.is(lines.filter((l) => l.message === 'PostgreSQL unavailable' && l.level === 'warn').length, 2)
  t.is(lines.filter((l) => l.message === 'PostgreSQL available again').length, 2)
  t.false(lines.some((l) => l.message === 'unhandled error' || l.message === 'job failed' || l.message === 'worker error'))
})
