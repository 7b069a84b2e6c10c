// OTLP/HTTP metrics ingest (docs/decisions.md §25) through OpenTelemetry's own SDK and exporters, over protobuf
// and JSON, gzip included: counters (cumulative, differenced per stream across exports), up-down counters,
// gauges and histograms, every value read back through the export API. Refusals by hand: status, message, and
// nothing stored.
import { gzipSync } from 'node:zlib'
import test, { type ExecutionContext } from 'ava'
import { OTLPMetricExporter as HttpExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { request } from '../helpers/http.js'
import { keyedAccount, readBack, snapshot } from '../helpers/protocols.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite({ workers: true })

function sdk(exporter: PushMetricExporter, service: string) {
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': service }), readers: [reader] })
  return { meter: provider.getMeter('test'), flush: () => provider.forceFlush(), close: () => provider.shutdown() }
}

const sum = (xs: Array<{ value: number }>) => xs.reduce((a, p) => a + p.value, 0)

for (const [encoding, make] of [
  ['protobuf', (url: string, key: string) => new ProtoExporter({ url, headers: { authorization: `Bearer ${key}` } })],
  [
    'JSON, gzip',
    (url: string, key: string) =>
      new HttpExporter({ url, headers: { authorization: `Bearer ${key}` }, compression: CompressionAlgorithm.GZIP }),
  ],
] as const) {
  test(`the OpenTelemetry SDK exports counters, up-down counters, gauges and histograms over ${encoding}`, async (t) => {
    const { key } = await keyedAccount(app)
    const { meter, flush, close } = sdk(make(`${app.url}/otlp/v1/metrics`, key), 'checkout')
    const orders = meter.createCounter('orders')
    const queue = meter.createUpDownCounter('queue')
    const temp = meter.createGauge('temperature')
    const latency = meter.createHistogram('latency')
    orders.add(3, { region: 'eu' })
    orders.add(4, { region: 'eu' })
    queue.add(5)
    queue.add(-2)
    temp.record(21.5)
    for (const v of [10, 20, 300]) latency.record(v)
    await flush()
    // The second export carries cumulative totals again: only what was added since is stored.
    orders.add(5, { region: 'eu' })
    latency.record(30)
    await flush()
    await close()
    const back = await readBack(app, key)
    t.deepEqual(Object.keys(back).sort(), [
      'latency{service=checkout}',
      'orders{region=eu,service=checkout}',
      'queue{service=checkout}',
      'temperature{service=checkout}',
    ])
    const ordersBack = back['orders{region=eu,service=checkout}']
    t.is(ordersBack.kind, 'counter')
    t.deepEqual(
      ordersBack.points.map((p) => p.value),
      [7, 5],
      'the first cumulative point counts from its start, the next by difference',
    )
    // Three exports (two flushes and the shutdown's): a gauge's value each time, an idle counter's nothing.
    t.deepEqual(
      back['queue{service=checkout}'].points.map((p) => p.value),
      [3, 3, 3],
    )
    t.is(back['queue{service=checkout}'].kind, 'gauge')
    t.deepEqual(
      back['temperature{service=checkout}'].points.map((p) => p.value),
      [21.5, 21.5, 21.5],
    )
    const lat = back['latency{service=checkout}'].points.map((p) => p.value).sort((a, b) => a - b)
    t.is(lat.length, 4, 'one observation per recorded value')
    t.true(Math.abs(sum(lat.map((value) => ({ value }))) - 360) < 1e-9, `sum ${lat}`)
    // Each in its bucket of the default boundaries: (5, 10], (10, 25], (25, 50], (250, 300] (max 300).
    t.true(
      lat[0] > 5 && lat[0] <= 10 && lat[1] > 10 && lat[1] <= 25 && lat[2] > 25 && lat[2] <= 50 && lat[3] > 250 && lat[3] <= 300,
      String(lat),
    )
  })
}

const json = (points: unknown[], metric: Record<string, unknown> = {}) => ({
  resourceMetrics: [
    {
      resource: { attributes: [] },
      scopeMetrics: [{ scope: { name: 's' }, metrics: points.map((p, i) => ({ name: `m${i}`, gauge: { dataPoints: [p] }, ...metric })) }],
    },
  ],
})
const nowNs = () => `${Math.floor(Date.now() / 1000)}000000000`

async function post(key: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return request(app.url, '/otlp/v1/metrics', {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
  })
}

async function refused(
  t: ExecutionContext,
  accountId: string,
  send: () => Promise<{ status: number; body: any }>,
  status: number,
  message: RegExp,
) {
  const before = await snapshot(app, accountId)
  const res = await send()
  t.is(res.status, status)
  t.regex(String(res.body?.message), message)
  t.deepEqual(await snapshot(app, accountId), before, 'nothing stored')
}

test('partial success: the refused points are counted and named, the rest stored', async (t) => {
  const { key } = await keyedAccount(app)
  const res = await post(
    key,
    json([
      { timeUnixNano: nowNs(), asDouble: 1.5 },
      { timeUnixNano: '946684700000000000', asInt: '2' },
      { timeUnixNano: nowNs(), asInt: '7' },
    ]),
  )
  t.is(res.status, 200)
  t.is(res.body.partialSuccess.rejectedDataPoints, '1')
  t.regex(res.body.partialSuccess.errorMessage, /^m1: .*timestamp/)
  const back = await readBack(app, key)
  t.deepEqual(Object.keys(back).sort(), ['m0', 'm2'])
  t.deepEqual(
    back.m2.points.map((p) => p.value),
    [7],
  )
})

test('refusals store nothing: no key, a bad body, every point refused, a wrong type, Summary', async (t) => {
  const { key, user } = await keyedAccount(app)
  await refused(t, user.accountId, () => post(undefined, json([{ asDouble: 1 }])), 401, /missing credentials/)
  await refused(t, user.accountId, () => post(key, '{"resourceMetrics": [', {}), 400, /not an OTLP ExportMetricsServiceRequest in JSON/)
  await refused(
    t,
    user.accountId,
    () =>
      request(app.url, '/otlp/v1/metrics', {
        body: 'garbage',
        headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${key}` },
      }),
    400,
    /./,
  )
  await refused(
    t,
    user.accountId,
    () => post(key, json([{ timeUnixNano: nowNs(), asDouble: 1 }]), { 'content-type': 'text/plain' }),
    415,
    /Content-Type must be/,
  )
  await refused(
    t,
    user.accountId,
    () =>
      post(
        key,
        json(
          [
            { timeUnixNano: '1', asDouble: 1 },
            { timeUnixNano: nowNs(), asDouble: 1 },
          ],
          { name: 'x'.repeat(200) },
        ),
      ),
    400,
    /every data point was refused: x+: invalid stat name.*longer than 128/,
  )
  await refused(
    t,
    user.accountId,
    () =>
      post(key, {
        resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'summ', summary: { dataPoints: [{ timeUnixNano: nowNs() }] } }] }] }],
      }),
    400,
    /summ: Summary metrics are not accepted/,
  )
  // A gauge point to an existing counter stat refuses the whole request (as every protocol does).
  await post(key, {
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              { name: 'c', sum: { isMonotonic: true, aggregationTemporality: 1, dataPoints: [{ timeUnixNano: nowNs(), asInt: '1' }] } },
            ],
          },
        ],
      },
    ],
  })
  await refused(
    t,
    user.accountId,
    () => post(key, json([{ timeUnixNano: nowNs(), asDouble: 1 }], { name: 'c' })),
    400,
    /metric c: .*counter/,
  )
  // gzip that is not gzip.
  await refused(t, user.accountId, () => post(key, 'not gzip', { 'content-encoding': 'gzip' }), 400, /decompress/)
})

test('a cumulative counter reset (new start time or a drop) counts from zero again; a delta sum is stored as sent', async (t) => {
  const { key } = await keyedAccount(app)
  const sumOf = (start: string, value: number, temporality = 2) => ({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'hits',
                sum: {
                  isMonotonic: true,
                  aggregationTemporality: temporality,
                  dataPoints: [{ startTimeUnixNano: start, timeUnixNano: nowNs(), asInt: String(value) }],
                },
              },
            ],
          },
        ],
      },
    ],
  })
  for (const [start, value] of [
    ['100', 10],
    ['100', 15],
    ['100', 4],
    ['200', 6],
  ] as const)
    t.is((await post(key, sumOf(start, value))).status, 200)
  t.is((await post(key, sumOf('0', 9, 1))).status, 200)
  const back = await readBack(app, key)
  // 10 (from its start), +5, a drop to 4 (a reset: 4), a new start (6), then a delta of 9.
  t.deepEqual(
    back.hits.points.map((p) => p.value).sort((a, b) => a - b),
    [4, 5, 6, 9, 10],
  )
})

test('a gzipped protobuf body of no metrics is a success with an empty answer', async (t) => {
  const { key } = await keyedAccount(app)
  const res = await fetch(`${app.url}/otlp/v1/metrics`, {
    method: 'POST',
    body: new Uint8Array(gzipSync(Buffer.alloc(0))),
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip', authorization: `Bearer ${key}` },
  })
  t.is(res.status, 200)
  t.is(res.headers.get('content-type'), 'application/x-protobuf')
  t.is((await res.arrayBuffer()).byteLength, 0)
})
