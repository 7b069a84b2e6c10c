// The service's own metrics (decisions.md 26, issue 44): /metrics on METRICS_PORT in Prometheus' text format,
// its values checked against what the queue and PostgreSQL hold; off when unset; never on the public port.
import test from 'ava'
import { readFileSync } from 'node:fs'
import { loadConfig } from '../../shared/config.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'
import { directAnswers } from '../../api/direct-writes.js'
import { QUEUES, type QueueKey } from '../../shared/jobs.js'

let app: TestApp
let user: User
let key: string
test.before(async () => {
  app = await startTestApp({ METRICS_PORT: '0' })
  user = await signUp(app.url)
  key = (await createKey(app.url, user)).key
})
test.after.always(() => app?.close())

type Samples = Map<string, number>

/** One scrape: every sample by `name{labels}` as written (labels in prom-client's order), and the raw text. */
async function scrape(): Promise<{ samples: Samples; text: string; type: string | null }> {
  const res = await fetch(app.api.metrics!.url)
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`)
  const text = await res.text()
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    samples.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return { samples, text, type: res.headers.get('content-type') }
}

/** Scrapes until `check` holds (the cluster gauges are read at most every 2 s), failing with the last values after 10 s. */
async function until(check: (s: Samples) => Promise<string | undefined>): Promise<Samples> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const { samples } = await scrape()
    const problem = await check(samples)
    if (!problem) return samples
    if (Date.now() > deadline) throw new Error(problem)
    await new Promise((r) => setTimeout(r, 200))
  }
}

const ingestCounts = () => app.api.deps.queues.get('ingest').getJobCounts('waiting', 'prioritized', 'active', 'delayed')

test.serial(
  'points accepted and refused per route, queue depth and oldest job age as the queue holds them, points stored as PostgreSQL holds them',
  async (t) => {
    // No worker yet: what is accepted stays in the persist queue.
    for (let i = 0; i < 5; i++)
      t.is((await request(app.url, '/api/v1/stats/m.single/value', { json: { value: i }, bearer: key })).status, 200)
    const batch = Array.from({ length: 100 }, (_, i) => ({ stat: 'm.batch', value: i }))
    t.is((await request(app.url, '/api/v1/points', { json: { points: batch }, bearer: key })).status, 200)
    const ez = await request(app.url, '/ez', {
      json: { ezkey: key, data: Array.from({ length: 20 }, (_, i) => ({ stat: 'm.ez', value: i })) },
    })
    t.is(ez.status, 200, ez.text)
    // Refused: a batch whose first point is of the wrong kind for its stat (counter written as a gauge) stores nothing.
    t.is((await request(app.url, '/api/v1/stats/m.counter/count', { json: { count: 1 }, bearer: key })).status, 200)
    const refused = await request(app.url, '/api/v1/points', {
      json: {
        points: [
          { stat: 'm.counter', value: 1 },
          { stat: 'm.refused', value: 2 },
        ],
      },
      bearer: key,
    })
    t.is(refused.status, 400, refused.text)
    t.is(refused.body.code, 'kind_conflict')

    const { samples, text, type } = await scrape()
    t.regex(type ?? '', /^text\/plain; version=0\.0\.4/)
    t.regex(text, /# TYPE metrics_service_points_accepted_total counter/)
    t.is(samples.get('metrics_service_points_accepted_total{route="single"}'), 6)
    t.is(samples.get('metrics_service_points_accepted_total{route="batch"}'), 100)
    t.is(samples.get('metrics_service_points_accepted_total{route="ez"}'), 20)
    t.is(samples.get('metrics_service_points_refused_total{route="batch"}'), 2)
    t.is(samples.get('metrics_service_http_requests_total{route="/api/v1/points",method="POST",code="400"}'), 1)
    t.is(samples.get('metrics_service_http_requests_total{route="/ez",method="POST",code="200"}'), 1)
    // Process metrics (shared/metrics/process.ts, under prom-client's default names).
    t.true(samples.get('process_resident_memory_bytes')! > 0)
    t.true(samples.has('nodejs_eventloop_lag_seconds'))
    const [{ n: refusedStored }] = await app.sql<
      [{ n: number }]
    >`select count(*)::int as n from stats where account_id = ${user.accountId} and name = 'm.refused'`
    t.is(refusedStored, 0)

    // Queue depth: what BullMQ counts in the persist queue; the oldest job's age grows while nothing takes it.
    const waiting = await until(async (s) => {
      const c = await ingestCounts()
      const gauge = s.get('metrics_service_queue_jobs{queue="ingest",state="waiting"}')
      return c.waiting + c.prioritized > 0 &&
        gauge === c.waiting + c.prioritized &&
        s.get('metrics_service_queue_oldest_job_age_seconds{queue="ingest"}')! >= 1
        ? undefined
        : `queue gauge ${gauge}, queue ${JSON.stringify(c)}, oldest ${s.get('metrics_service_queue_oldest_job_age_seconds{queue="ingest"}')}`
    })
    t.true(waiting.get('metrics_service_persist_lag_seconds')! >= 1)
    t.is(waiting.get('metrics_service_scrape_dependency_up{dependency="redis"}'), 1)
    t.is(waiting.get('metrics_service_scrape_dependency_up{dependency="postgres"}'), 1)

    // A worker stores them: the points stored counter is what PostgreSQL holds, and the queue gauge drops to 0.
    await app.startWorkers()
    await settle(app)
    const [{ n: inDb }] = await app.sql<[{ n: number }]>`
    select count(*)::int as n from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId}`
    t.is(inDb, 126) // 5 values and a count, 100 in the batch, 20 through /ez
    const drained = await until(async (s) =>
      s.get('metrics_service_queue_jobs{queue="ingest",state="waiting"}') === 0 ? undefined : 'queue gauge not 0 after the queue drained',
    )
    t.is(drained.get('metrics_service_points_stored_total'), inDb)
    t.is(drained.get('metrics_service_persist_lag_seconds'), 0)
    t.true(drained.get('metrics_service_jobs_completed_total{queue="ingest"}')! >= 1)
  },
)

test.serial(
  "every queue's gauges by state are what BullMQ counts in it (the schedules' delayed jobs, a job delayed an hour)",
  async (t) => {
    const queues = app.api.deps.queues
    await queues.get('maintenance').add('purge-sessions', {}, { delay: 3_600_000 })
    const states = ['waiting', 'active', 'delayed', 'failed'] as const
    const counted = async () => {
      const out: Record<string, number> = {}
      for (const key of Object.keys(QUEUES) as QueueKey[]) {
        const c = await queues.get(key).getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed')
        out[`${key} waiting`] = c.waiting + c.prioritized
        for (const state of states.slice(1)) out[`${key} ${state}`] = c[state]
      }
      return out
    }
    // Jobs start and end between a scrape and the count: until the two agree.
    const samples = await until(async (s) => {
      const c = await counted()
      const off = Object.entries(c).filter(([k, n]) => {
        const [queue, state] = k.split(' ')
        return s.get(`metrics_service_queue_jobs{queue="${queue}",state="${state}"}`) !== n
      })
      return off.length ? `gauges differ from BullMQ's counts: ${JSON.stringify(off)}` : undefined
    })
    t.true(samples.get('metrics_service_queue_jobs{queue="maintenance",state="delayed"}')! >= 1)
    // A queue with no job running reports 0 for its longest-running one.
    for (const key of Object.keys(QUEUES))
      if (samples.get(`metrics_service_queue_jobs{queue="${key}",state="active"}`) === 0)
        t.is(samples.get(`metrics_service_queue_longest_active_job_seconds{queue="${key}"}`), 0)
  },
)

test.serial('legacy single writes answered without Koa (api/direct-writes.ts) are counted as the Koa route counts them', async (t) => {
  const busy = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${busy.accountId}`
  const busyKey = (await createKey(app.url, busy)).key
  const { samples: before } = await scrape()
  const requests = () => `metrics_service_http_requests_total{route="/ez",method="POST",code="200"}`
  const direct = directAnswers.count
  const sent = 120
  for (let wave = 0; wave < sent / 20; wave++)
    await Promise.all(
      Array.from({ length: 20 }, async () =>
        t.is((await request(app.url, '/ez', { form: `ezkey=${busyKey}&stat=m.direct&count=1` })).status, 200),
      ),
    )
  t.true(directAnswers.count - direct > 0, 'some writes were answered without Koa')
  const { samples: after } = await scrape()
  t.is((after.get(requests()) ?? 0) - (before.get(requests()) ?? 0), sent)
  const accepted = 'metrics_service_points_accepted_total{route="single"}'
  t.is((after.get(accepted) ?? 0) - (before.get(accepted) ?? 0), sent)
})

test('the public port does not serve /metrics', async (t) => {
  const res = await request(app.url, '/metrics')
  t.is(res.status, 404)
  t.notRegex(res.text, /metrics_service_/)
})

test('the metrics listener serves /metrics only', async (t) => {
  const other = await fetch(app.api.metrics!.url.replace(/\/metrics$/, '/health'))
  t.is(other.status, 404)
  const post = await fetch(app.api.metrics!.url, { method: 'POST' })
  t.is(post.status, 404)
})

test('without METRICS_PORT there is no metrics listener and the public port does not serve /metrics', async (t) => {
  const plain = await app.another({ METRICS_PORT: undefined })
  t.is(plain.api.metrics, undefined)
  const res = await request(plain.url, '/metrics')
  t.is(res.status, 404)
  t.notRegex(res.text, /metrics_service_/)
})

test('METRICS_PORT equal to PORT is refused', (t) => {
  const err = t.throws(() => loadConfig({ PORT: '3000', METRICS_PORT: '3000' }))
  t.regex(err!.message, /METRICS_PORT: must differ from PORT/)
  t.is(loadConfig({ PORT: '3000' }).metricsPort, undefined)
  t.is(loadConfig({ PORT: '3000', METRICS_PORT: '9464' }).metricsPort, 9464)
})

test('every metric the Grafana dashboard (docs/grafana-operations.json) draws is served', async (t) => {
  const dashboard = JSON.parse(readFileSync('docs/grafana-operations.json', 'utf8'))
  const exprs: string[] = dashboard.panels.flatMap((p: { targets?: Array<{ expr: string }> }) => (p.targets ?? []).map((x) => x.expr))
  const names = new Set(exprs.flatMap((e) => e.match(/\b(metrics_service_|process_|nodejs_)[a-z0-9_]+/g) ?? []))
  t.true(names.size >= 15)
  const { text } = await scrape()
  const served = new Set(
    [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
      type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
    ),
  )
  t.deepEqual(
    [...names].filter((n) => !served.has(n)),
    [],
  )
})
