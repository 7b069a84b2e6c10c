// The Prometheus API over tagged series (docs/decisions.md §24, §25): each tag set of a stat is one series
// labelled {__name__, ...tags}; matchers on tag labels select series; the look-ups list tag labels.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import test from 'ava'
import { request } from '../helpers/http.js'
import { keyedAccount } from '../helpers/protocols.js'
import { settle } from '../helpers/storage.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite({ workers: true })

// Whole minutes, an hour back: every sample 5 s past a 15 s grid, so no sample sits on a window's edge.
const base = Math.floor(Date.now() / 60_000) * 60 - 3600
let key = ''

test.serial.before(async () => {
  ;({ key } = await keyedAccount(app))
  const at = (i: number) => base + 5 + 15 * i
  const points = [
    // hits{host=web1}: running totals 1, 3, 6, 10 (rate over [1m] at base+60: 12 / 60); web2 twice that.
    ...[1, 2, 3, 4].map((count, i) => ({ stat: 'hits', count, t: at(i), tags: { host: 'web1', region: 'eu' } })),
    ...[2, 4, 6, 8].map((count, i) => ({ stat: 'hits', count, t: at(i), tags: { host: 'web2', region: 'us' } })),
    ...[10, 40, 20, 30].map((value, i) => ({ stat: 'temp', value, t: at(i), tags: { host: 'web1' } })),
    ...[1, 2, 3, 4].map((value, i) => ({ stat: 'temp', value, t: at(i), tags: { host: 'web2' } })),
    // A stat with an untagged series beside a tagged one.
    { stat: 'jobs', value: 5, t: at(3) },
    { stat: 'jobs', value: 7, t: at(3), tags: { host: 'web3' } },
  ]
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points } })
  if (res.status !== 200) throw new Error(res.text)
  await settle(app)
})

const prom = (path: string, form?: string) => request(app.url, `/prometheus/api/v1${path}`, { bearer: key, form })
const canonical = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort())
const byLabels = (a: { metric: Record<string, string> }, b: { metric: Record<string, string> }) =>
  canonical(a.metric) < canonical(b.metric) ? -1 : 1

test('sum by (host) of a counter rate answers per tag value', async (t) => {
  const res = await prom(`/query?query=${encodeURIComponent('sum by (host) (rate(hits[1m]))')}&time=${base + 60}`)
  t.is(res.status, 200, res.text)
  t.deepEqual(res.body.data.result.sort(byLabels), [
    { metric: { host: 'web1' }, value: [base + 60, '0.2'] },
    { metric: { host: 'web2' }, value: [base + 60, '0.4'] },
  ])
  const byRegion = await prom(`/query?query=${encodeURIComponent('sum by (region) (increase(hits[1m]))')}&time=${base + 60}`)
  t.deepEqual(byRegion.body.data.result.sort(byLabels), [
    { metric: { region: 'eu' }, value: [base + 60, '12'] },
    { metric: { region: 'us' }, value: [base + 60, '24'] },
  ])
})

test('matchers on tag labels select series: =, !=, =~, !~, and a missing tag as the empty string', async (t) => {
  const q = async (expr: string) => {
    const res = await prom(`/query?query=${encodeURIComponent(expr)}&time=${base + 60}`)
    t.is(res.status, 200, res.text)
    return res.body.data.result.sort(byLabels)
  }
  t.deepEqual(await q('{host="web1"}'), [
    { metric: { __name__: 'hits', host: 'web1', region: 'eu' }, value: [base + 60, '10'] },
    { metric: { __name__: 'temp', host: 'web1' }, value: [base + 60, '30'] },
  ])
  t.deepEqual(await q('temp{host!="web1"}'), [{ metric: { __name__: 'temp', host: 'web2' }, value: [base + 60, '4'] }])
  t.deepEqual(await q('hits{region=~"u.*"}'), [{ metric: { __name__: 'hits', host: 'web2', region: 'us' }, value: [base + 60, '20'] }])
  t.deepEqual(await q('hits{host!~"web1|web2"}'), [])
  // The untagged series has __name__ only: host="" selects it, and a host matcher does not.
  t.deepEqual(await q('jobs{host=""}'), [{ metric: { __name__: 'jobs' }, value: [base + 60, '5'] }])
  t.deepEqual(await q('jobs'), [
    { metric: { __name__: 'jobs', host: 'web3' }, value: [base + 60, '7'] },
    { metric: { __name__: 'jobs' }, value: [base + 60, '5'] },
  ])
})

test('labels, label values and series list the tag labels and tag sets', async (t) => {
  const labels = await prom('/labels')
  t.deepEqual(labels.body, { status: 'success', data: ['__name__', 'host', 'region'] })
  const hosts = await prom('/label/host/values')
  t.deepEqual(hosts.body, { status: 'success', data: ['web1', 'web2', 'web3'] })
  const hitsHosts = await prom(`/label/host/values?match[]=${encodeURIComponent('hits')}`)
  t.deepEqual(hitsHosts.body.data, ['web1', 'web2'])
  const names = await prom('/label/__name__/values')
  t.deepEqual(names.body.data, ['hits', 'jobs', 'temp'])
  const series = await prom(`/series?match[]=hits`)
  t.is(series.status, 200, series.text)
  // hits was written only with tags: its untagged row holds no points and is no series.
  t.deepEqual(
    series.body.data.sort((a: Record<string, string>, b: Record<string, string>) => (a.host < b.host ? -1 : 1)),
    [
      { __name__: 'hits', host: 'web1', region: 'eu' },
      { __name__: 'hits', host: 'web2', region: 'us' },
    ],
  )
  const web1 = await prom(`/series?match[]=${encodeURIComponent('{host="web1"}')}`)
  t.is(web1.body.data.length, 2)
})

test("the Grafana dashboard's queries answer per tag", async (t) => {
  const dashboard = JSON.parse(readFileSync(join(process.cwd(), 'docs/grafana-stat-by-tag.json'), 'utf8'))
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((x) => x.expr))
  t.is(exprs.length, 3)
  const fill = (e: string, stat: string) =>
    e.replaceAll('$tag', 'host').replaceAll('$stat', stat).replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1m')
  const range = await prom(
    '/query_range',
    `query=${encodeURIComponent(fill(exprs[0], 'hits'))}&start=${base + 60}&end=${base + 60}&step=15`,
  )
  t.is(range.status, 200, range.text)
  t.deepEqual(range.body.data.result.sort(byLabels), [
    { metric: { host: 'web1' }, values: [[base + 60, '0.2']] },
    { metric: { host: 'web2' }, values: [[base + 60, '0.4']] },
  ])
  const gauge = await prom(
    '/query_range',
    `query=${encodeURIComponent(fill(exprs[1], 'temp'))}&start=${base + 60}&end=${base + 60}&step=15`,
  )
  t.deepEqual(gauge.body.data.result.sort(byLabels), [
    { metric: { host: 'web1' }, values: [[base + 60, '30']] },
    { metric: { host: 'web2' }, values: [[base + 60, '4']] },
  ])
  const total = await prom('/query', `query=${encodeURIComponent(fill(exprs[2], 'hits'))}&time=${base + 60}`)
  t.deepEqual(total.body.data.result, [{ metric: {}, value: [base + 60, '36'] }])
})

test('tag keys with . and - are labels in Prometheus 3 quoting: matchers, by, without, on, ignoring and the look-ups', async (t) => {
  // An account of its own, so the look-ups list only these labels.
  const { key: own } = await keyedAccount(app)
  const at = (i: number) => base + 5 + 15 * i
  const points = [
    ...[1, 2, 3, 4].map((count, i) => ({ stat: 'served', count, t: at(i), tags: { 'host.name': 'a', 'k8s-pod': 'p-1' } })),
    ...[2, 4, 6, 8].map((count, i) => ({ stat: 'served', count, t: at(i), tags: { 'host.name': 'b', 'k8s-pod': 'p-2' } })),
    ...[5, 5, 5, 5].map((value, i) => ({ stat: 'cpu.load', value, t: at(i), tags: { 'host.name': 'a' } })),
  ]
  const written = await request(app.url, '/api/v1/points', { bearer: own, json: { points } })
  t.is(written.status, 200, written.text)
  await settle(app)
  const ask = (path: string, form?: string) => request(app.url, `/prometheus/api/v1${path}`, { bearer: own, form })
  const q = async (expr: string) => {
    const res = await ask(`/query?query=${encodeURIComponent(expr)}&time=${base + 60}`)
    t.is(res.status, 200, `${expr}: ${res.text}`)
    return res.body.data.result.sort(byLabels)
  }
  // Totals at base + 60: served{a} 10, served{b} 20; rates over [1m] 0.2 and 0.4 (as in the tests above).
  t.deepEqual(await q('sum by ("host.name") (rate(served[1m]))'), [
    { metric: { 'host.name': 'a' }, value: [base + 60, '0.2'] },
    { metric: { 'host.name': 'b' }, value: [base + 60, '0.4'] },
  ])
  t.deepEqual(await q('{"host.name"="a"}'), [
    { metric: { __name__: 'cpu.load', 'host.name': 'a' }, value: [base + 60, '5'] },
    { metric: { __name__: 'served', 'host.name': 'a', 'k8s-pod': 'p-1' }, value: [base + 60, '10'] },
  ])
  t.deepEqual(await q('served{"k8s-pod"=~"p-.*", "host.name"!="a"}'), [
    { metric: { __name__: 'served', 'host.name': 'b', 'k8s-pod': 'p-2' }, value: [base + 60, '20'] },
  ])
  t.deepEqual(await q('{"served", "k8s-pod"="p-1"}'), [
    { metric: { __name__: 'served', 'host.name': 'a', 'k8s-pod': 'p-1' }, value: [base + 60, '10'] },
  ])
  t.deepEqual(await q('sum without ("k8s-pod") (served)'), [
    { metric: { 'host.name': 'a' }, value: [base + 60, '10'] },
    { metric: { 'host.name': 'b' }, value: [base + 60, '20'] },
  ])
  t.deepEqual(await q('served / on("host.name") {"cpu.load"}'), [{ metric: { 'host.name': 'a' }, value: [base + 60, '2'] }])
  t.deepEqual(await q('served / ignoring("k8s-pod") {"cpu.load"}'), [{ metric: { 'host.name': 'a' }, value: [base + 60, '2'] }])
  // A range query over POST form, as Grafana sends it.
  const range = await ask(
    '/query_range',
    `query=${encodeURIComponent('sum by ("host.name") (increase(served[1m]))')}&start=${base + 60}&end=${base + 60}&step=15`,
  )
  t.is(range.status, 200, range.text)
  t.deepEqual(range.body.data.result.sort(byLabels), [
    { metric: { 'host.name': 'a' }, values: [[base + 60, '12']] },
    { metric: { 'host.name': 'b' }, values: [[base + 60, '24']] },
  ])
  const labels = await ask('/labels')
  t.deepEqual(labels.body, { status: 'success', data: ['__name__', 'host.name', 'k8s-pod'] })
  // Prometheus 3 clients escape such a name in the path (U__, `.` as _2e_); the name as it is works too.
  for (const name of ['U__host_2e_name', 'host.name']) {
    const values = await ask(`/label/${name}/values`)
    t.deepEqual(values.body, { status: 'success', data: ['a', 'b'] }, name)
  }
  const pods = await ask(`/label/U__k8s_2d_pod/values?match[]=${encodeURIComponent('{"host.name"="b"}')}`)
  t.deepEqual(pods.body.data, ['p-2'])
  const series = await ask('/series', `match[]=${encodeURIComponent('{"host.name"="b"}')}`)
  t.is(series.status, 200, series.text)
  t.deepEqual(series.body.data, [{ __name__: 'served', 'host.name': 'b', 'k8s-pod': 'p-2' }])
  // An unquoted dotted name is a parse error, as on Prometheus: the name must be quoted.
  const bad = await ask(`/query?query=${encodeURIComponent('sum by (host.name) (served)')}`)
  t.is(bad.status, 400, bad.text)
  t.is(bad.body.errorType, 'bad_data')
})
