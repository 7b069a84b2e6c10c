// The Prometheus-compatible read API (docs/decisions.md §25) through real clients: Debian's promtool, the
// prometheus-query npm client, and Grafana's Prometheus data source's own request shapes (POST form bodies,
// the 1+1 health check, labels, label values, series with match[], metadata). Points are written through
// /api/v1/points and read back through PromQL: counters as running totals, so increase() answers as on
// Prometheus' own counters.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import test from 'ava'
import { PrometheusDriver } from 'prometheus-query'
import { settle } from '../helpers/storage.js'
import { request } from '../helpers/http.js'
import { keyedAccount } from '../helpers/protocols.js'
import { signUp } from '../helpers/factories.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite({ workers: true })
const run = promisify(execFile)

// Whole minutes, an hour back: every sample 5 s past a 15 s grid, so no sample sits on a window's edge.
const base = Math.floor(Date.now() / 60_000) * 60 - 3600
let key = ''
let other = ''

test.serial.before(async () => {
  ;({ key } = await keyedAccount(app))
  ;({ key: other } = await keyedAccount(app))
  const points = [
    // A counter of 1, 2, 3, 4 at +5, +20, +35, +50: running totals 1, 3, 6, 10.
    ...[1, 2, 3, 4].map((count, i) => ({ stat: 'requests', count, t: base + 5 + 15 * i })),
    ...[10, 40, 20, 30].map((value, i) => ({ stat: 'api.latency', value, t: base + 5 + 15 * i })),
    ...[1, 2].map((value, i) => ({ stat: 'queue_depth', value, t: base + 5 + 15 * i })),
  ]
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points } })
  if (res.status !== 200) throw new Error(res.text)
  await request(app.url, '/api/v1/points', { bearer: other, json: { points: [{ stat: 'requests', count: 1000, t: base + 5 }] } })
  await settle(app)
})

const prom = (path: string, opts: { form?: string; bearer?: string; headers?: Record<string, string> } = {}) =>
  request(app.url, `/prometheus/api/v1${path}`, { bearer: opts.bearer ?? key, form: opts.form, headers: opts.headers })

test('an instant query reads counters as running totals and gauges as they are', async (t) => {
  const res = await prom(`/query?query=${encodeURIComponent('increase(requests[1m])')}&time=${base + 60}`)
  t.is(res.status, 200, res.text)
  // Totals 1, 3, 6, 10: 9 over 45 s, extrapolated 5 s back (where it would reach 0) and 10 s forward: 9 x 60 / 45.
  t.deepEqual(res.body, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [base + 60, '12'] }] } })
  const g = await prom(`/query?query=${encodeURIComponent('{"api.latency"}')}&time=${base + 60}`)
  t.deepEqual(g.body.data.result, [{ metric: { __name__: 'api.latency' }, value: [base + 60, '30'] }])
  const total = await prom(`/query?query=requests&time=${base + 60}`)
  t.deepEqual(
    total.body.data.result,
    [{ metric: { __name__: 'requests' }, value: [base + 60, '10'] }],
    "another account's points are not read",
  )
})

test('a range query over POST form, as Grafana sends it', async (t) => {
  const res = await prom('/query_range', {
    form: `query=${encodeURIComponent('sum(requests) * 2')}&start=${base + 15}&end=${base + 60}&step=15s`,
  })
  t.is(res.status, 200, res.text)
  t.deepEqual(res.body.data, {
    resultType: 'matrix',
    result: [
      {
        metric: {},
        values: [
          [base + 15, '2'],
          [base + 30, '6'],
          [base + 45, '12'],
          [base + 60, '20'],
        ],
      },
    ],
  })
})

test("Grafana's health check, buildinfo, labels, label values, series and metadata", async (t) => {
  const health = await prom('/query', { form: 'query=1%2B1&time=4' })
  t.deepEqual(health.body, { status: 'success', data: { resultType: 'scalar', result: [4, '2'] } })
  const info = await prom('/status/buildinfo')
  t.is(info.status, 200)
  t.regex(info.body.data.version, /^2\./)
  t.false('features' in info.body.data, 'no features: Grafana would take it for Mimir')
  t.deepEqual((await prom(`/labels?start=${base}&end=${base + 60}`)).body, { status: 'success', data: ['__name__'] })
  t.deepEqual((await prom('/labels', { form: `match[]=${encodeURIComponent('{__name__=~".+"}')}` })).body.data, ['__name__'])
  t.deepEqual((await prom('/label/__name__/values')).body.data, ['api.latency', 'queue_depth', 'requests'])
  t.deepEqual((await prom(`/label/__name__/values?match[]=${encodeURIComponent('{__name__=~"q.*"}')}`)).body.data, ['queue_depth'])
  t.deepEqual((await prom('/label/job/values')).body.data, [])
  const series = await prom('/series', {
    form: `match[]=requests&match[]=${encodeURIComponent('{"api.latency"}')}&start=${base}&end=${base + 60}`,
  })
  t.deepEqual(
    series.body.data.sort((a: { __name__: string }, b: { __name__: string }) => a.__name__.localeCompare(b.__name__)),
    [{ __name__: 'api.latency' }, { __name__: 'requests' }],
  )
  const meta = await prom('/metadata?limit=40000')
  t.deepEqual(meta.body.data, {
    'api.latency': [{ type: 'gauge', help: '', unit: '' }],
    queue_depth: [{ type: 'gauge', help: '', unit: '' }],
    requests: [{ type: 'counter', help: '', unit: '' }],
  })
  t.deepEqual(Object.keys((await prom('/metadata?metric=requests')).body.data), ['requests'])
})

test('errors are Prometheus envelopes: bad_data 400, execution 422, 401 without a key', async (t) => {
  const fn = await prom(`/query?query=${encodeURIComponent('histogram_quantile(0.9, requests)')}`)
  t.is(fn.status, 400)
  t.deepEqual(fn.body, { status: 'error', errorType: 'bad_data', error: 'function "histogram_quantile" is not supported' })
  const syntax = await prom(`/query?query=${encodeURIComponent('rate(requests[5m]')}`)
  t.is(syntax.status, 400)
  t.is(syntax.body.errorType, 'bad_data')
  t.regex(syntax.body.error, /parse error/)
  const missing = await prom(`/query_range?query=requests&start=${base}&end=${base + 60}`)
  t.deepEqual([missing.status, missing.body.error], [400, 'invalid parameter "step": missing'])
  const badTime = await prom('/query?query=1&time=yesterday')
  t.deepEqual([badTime.status, badTime.body.errorType], [400, 'bad_data'])
  t.deepEqual((await prom('/series')).body, { status: 'error', errorType: 'bad_data', error: 'no match[] parameter provided' })
  const many = await prom(`/query?query=${encodeURIComponent('requests + on() {__name__=~".+"}')}&time=${base + 60}`)
  t.is(many.status, 422)
  t.is(many.body.errorType, 'execution')
  const anon = await request(app.url, '/prometheus/api/v1/query?query=1')
  t.is(anon.status, 401)
  t.is(anon.body.status, 'error')
  const wrong = await prom('/query?query=1', { bearer: 'not-a-key' })
  t.deepEqual([wrong.status, wrong.body.error], [401, 'invalid API key'])
})

test('the key as the Basic password', async (t) => {
  const basic = `Basic ${Buffer.from(`grafana:${key}`).toString('base64')}`
  const res = await request(app.url, '/prometheus/api/v1/query?query=vector(1)&time=10', { headers: { authorization: basic } })
  t.deepEqual(res.body, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [10, '1'] }] } })
})

test('promtool query instant and range', async (t) => {
  const server = `${app.url.replace('://', `://promtool:${key}@`)}/prometheus`
  const instant = await run('promtool', ['query', 'instant', '-o', 'json', `--time=${base + 60}`, server, 'increase(requests[1m])'])
  t.deepEqual(JSON.parse(instant.stdout), [{ metric: {}, value: [base + 60, '12'] }])
  const range = await run('promtool', [
    'query',
    'range',
    '-o',
    'json',
    `--start=${base + 30}`,
    `--end=${base + 60}`,
    '--step=15s',
    server,
    'max_over_time(queue_depth[1m])',
  ])
  t.deepEqual(JSON.parse(range.stdout), [
    {
      metric: {},
      values: [
        [base + 30, '2'],
        [base + 45, '2'],
        [base + 60, '2'],
      ],
    },
  ])
  const bad = await t.throwsAsync(run('promtool', ['query', 'instant', server, 'stddev(requests)']))
  t.regex(String((bad as { stderr?: string }).stderr), /aggregation "stddev" is not supported/)
})

test('the prometheus-query client', async (t) => {
  const driver = new PrometheusDriver({ endpoint: app.url, baseURL: '/prometheus/api/v1', auth: { username: 'x', password: key } })
  const q = await driver.instantQuery('avg_over_time({"api.latency"}[1m])', new Date((base + 60) * 1000))
  t.is(String(q.resultType), 'vector')
  t.is(q.result[0].value.value, 25)
  const r = await driver.rangeQuery('queue_depth', new Date((base + 15) * 1000), new Date((base + 30) * 1000), 15)
  t.deepEqual(
    r.result[0].values.map((v: { value: number }) => v.value),
    [1, 2],
  )
  t.deepEqual((await driver.labelValues('__name__')).sort(), ['api.latency', 'queue_depth', 'requests'])
  t.deepEqual(await driver.labelNames(), ['__name__'])
  const s = await driver.series('requests', new Date(base * 1000), new Date((base + 60) * 1000))
  t.is(s[0].name, 'requests')
})

test("the Grafana dashboard's queries, with its variables as Grafana fills them, chart a stat by tag", async (t) => {
  const dashboard = JSON.parse(readFileSync(join(process.cwd(), 'docs/grafana-stat-by-tag.json'), 'utf8'))
  t.is(dashboard.templating.list.find((v: { name: string }) => v.name === 'stat').definition, 'label_values(__name__)')
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((x) => x.expr))
  t.is(exprs.length, 3)
  const fill = (e: string) =>
    e.replaceAll('$tag', '__name__').replaceAll('$stat', 'requests').replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1m')
  const range = await prom('/query_range', {
    form: `query=${encodeURIComponent(fill(exprs[0]))}&start=${base + 60}&end=${base + 60}&step=15`,
  })
  // The counter's rate by __name__, its only label (an untagged stat; dropped by rate): one series of 12 / 60.
  t.deepEqual(range.body.data.result, [{ metric: {}, values: [[base + 60, '0.2']] }])
  const gauge = await prom('/query_range', {
    form: `query=${encodeURIComponent(fill(exprs[1]).replace('requests', 'api.latency'))}&start=${base + 60}&end=${base + 60}&step=15`,
  })
  t.deepEqual(gauge.body.data.result, [{ metric: { __name__: 'api.latency' }, values: [[base + 60, '30']] }])
  const total = await prom('/query', { form: `query=${encodeURIComponent(fill(exprs[2]))}&time=${base + 60}` })
  t.deepEqual(total.body.data.result, [{ metric: {}, value: [base + 60, '12'] }])
})

test('the query API takes read and full keys (POST forms too, as Grafana sends them); a write-only key is refused (403 forbidden_scope)', async (t) => {
  const user = await signUp(app.url)
  const scoped = async (scope: string) => {
    const res = await request(app.url, '/api/v1/auth/api-keys', { json: { label: scope, scope }, session: user.session })
    t.is(res.status, 201, res.text)
    return res.body.key as string
  }
  const [read, write] = [await scoped('read'), await scoped('write')]
  t.is((await prom('/query', { bearer: read, form: 'query=1%2B1&time=4' })).status, 200)
  t.is((await prom('/labels', { bearer: read })).status, 200)
  const refused = await prom('/query', { bearer: write, form: 'query=1%2B1&time=4' })
  t.is(refused.status, 403, refused.text)
  t.regex(refused.text, /forbidden_scope|write scope/)
})
