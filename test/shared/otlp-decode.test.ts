// OTLP protobuf bodies as the OpenTelemetry exporter sends them (docs/decisions.md §25), read as decoded (64-bit
// integers as Longs): integer attributes (alone and inside arrays) read as their decimal text, as in OTLP's JSON
// and as before, timestamps to the second, and a cumulative stream keyed by that same text; and bodies no exporter
// sends, encoded here, read as their JSON is.
import test from 'ava'
import type { MeterProvider } from '@opentelemetry/sdk-metrics'
import { convertOtlp, decodeOtlp, ExportMetricsServiceRequest } from '../../shared/ingest/protocols/otlp.js'
import { createRedis } from '../../shared/redis.js'
import { capturedExport } from '../helpers/otlp-export.js'

/** What the protobuf exporter sends for what `record` records. */
const exported = (record: (provider: MeterProvider) => void) => capturedExport({ 'service.name': 'shop', 'shard.id': 7 }, record)

test('integer attributes, arrays of them and timestamps read from protobuf as from JSON text', async (t) => {
  const before = Math.floor(Date.now() / 1000)
  const body = await exported((p) => {
    const meter = p.getMeter('test')
    meter.createGauge('temp').record(21.5, { code: 200, codes: [1, 2], zone: 'a' })
    meter.createCounter('orders').add(3, { code: 201 })
  })
  const redis = createRedis({ redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })
  try {
    const converted = await convertOtlp(decodeOtlp(body, 'protobuf'), 'account', redis, `test-otlp-${process.pid}`)
    t.deepEqual(converted.refused, [])
    const temp = converted.points.find((p) => p.name === 'temp')!
    t.deepEqual(temp.tags, {
      code: '200',
      codes: '{"values":[{"intValue":"1"},{"intValue":"2"}]}',
      service: 'shop',
      'shard.id': '7',
      zone: 'a',
    })
    t.is(temp.value, 21.5)
    t.true(temp.t! >= before && temp.t! <= Math.floor(Date.now() / 1000))
    // The counter is cumulative: its stream's state is keyed by the attributes' text, and its first point counts
    // from its start time.
    const orders = converted.points.find((p) => p.name === 'orders')!
    t.is(orders.value, 3)
    t.deepEqual(orders.tags, { code: '201', service: 'shop', 'shard.id': '7' })
    t.is(converted.state.size, 1)
    const [state] = [...converted.state.values()]
    t.regex(state.s, /^[1-9][0-9]{18}$/, 'the start time as its exact decimal text')
  } finally {
    redis.disconnect()
  }
})

/**
 * One request in OTLP's JSON (64-bit integers as decimal text) that each point of exercises one way protobuf's
 * fields differ from JSON's: 64-bit integers past 2^53, zeros that are sent, fields left out, every attribute type.
 */
function edgeRequest(nowSeconds: number) {
  // A time one nanosecond short of the next second: its nearest double is past that second.
  const time = `${nowSeconds}999999999`
  const start = `${nowSeconds - 60}000000001`
  const attrs = (host: string) => [
    { key: 'host', value: { stringValue: host } },
    { key: 'big', value: { intValue: '9007199254740993' } },
    { key: 'neg', value: { intValue: '-5' } },
    { key: 'ratio', value: { doubleValue: 0.25 } },
    { key: 'on', value: { boolValue: false } },
    { key: 'list', value: { arrayValue: { values: [{ intValue: '9007199254740993' }, { stringValue: 'x' }] } } },
    { key: 'kv', value: { kvlistValue: { values: [{ key: 'k', value: { intValue: '-1' } }] } } },
    { key: 'raw', value: { bytesValue: 'AAEC' } },
  ]
  const gauge = (name: string, point: Record<string, unknown>) => ({
    name,
    gauge: { dataPoints: [{ attributes: attrs(name), timeUnixNano: time, ...point }] },
  })
  return {
    resourceMetrics: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'shop' } },
            { key: 'shard', value: { intValue: '7' } },
          ],
        },
        scopeMetrics: [
          {
            scope: { name: 'edge' },
            metrics: [
              gauge('zero', { asDouble: 0 }),
              gauge('negzero', { asDouble: -0 }),
              gauge('int', { asInt: '-42' }),
              gauge('huge', { asInt: '9007199254740993' }),
              gauge('none', {}),
              {
                name: 'total',
                sum: {
                  isMonotonic: true,
                  aggregationTemporality: 2,
                  dataPoints: [{ attributes: attrs('total'), startTimeUnixNano: start, timeUnixNano: time, asInt: '12' }],
                },
              },
              {
                name: 'latency',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [
                    {
                      attributes: attrs('latency'),
                      startTimeUnixNano: start,
                      timeUnixNano: time,
                      count: '5',
                      sum: 31,
                      bucketCounts: ['3', '0', '2'],
                      explicitBounds: [1, 10],
                      min: 0.5,
                      max: 20,
                    },
                  ],
                },
              },
              {
                name: 'bare',
                histogram: {
                  aggregationTemporality: 1,
                  // No sum, min or max: neither 0 (a message's default) nor anything else narrows the bucket.
                  dataPoints: [{ timeUnixNano: time, count: '2', bucketCounts: ['0', '2', '0'], explicitBounds: [-10, 30] }],
                },
              },
              {
                name: 'overflow',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [
                    { startTimeUnixNano: start, timeUnixNano: time, count: '18446744073709551615', bucketCounts: ['18446744073709551615'] },
                  ],
                },
              },
              {
                name: 'exp',
                exponentialHistogram: {
                  aggregationTemporality: 1,
                  dataPoints: [
                    {
                      timeUnixNano: time,
                      count: '5',
                      scale: 1,
                      zeroCount: '1',
                      positive: { offset: -1, bucketCounts: ['1', '2'] },
                      negative: { bucketCounts: ['1'] },
                    },
                  ],
                },
              },
              { name: 'summ', summary: { dataPoints: [{ timeUnixNano: time }] } },
            ],
          },
        ],
      },
    ],
  }
}

test('protobuf and JSON of one request give the same points, refusals and stream state, 64-bit integers exactly', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const request = edgeRequest(now)
  const proto = Buffer.from(ExportMetricsServiceRequest.encode(ExportMetricsServiceRequest.fromObject(request)).finish())
  const redis = createRedis({ redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })
  try {
    const prefix = `test-otlp-edge-${process.pid}`
    const convert = async (body: Buffer, format: 'json' | 'protobuf') => {
      const c = await convertOtlp(decodeOtlp(body, format), 'account', redis, prefix)
      return { points: c.points, metricOf: c.metricOf, refused: c.refused, total: c.total, state: [...c.state] }
    }
    const fromProto = await convert(proto, 'protobuf')
    const fromJson = await convert(Buffer.from(JSON.stringify(request)), 'json')
    t.deepEqual(fromProto, fromJson)
    const byName = (name: string) => fromProto.points.filter((p) => p.name === name)
    t.true(
      fromProto.points.every((p) => p.t === now),
      'a time 1 ns short of a second is in that second',
    )
    t.deepEqual(
      ['zero', 'negzero', 'int', 'none'].map((n) => byName(n).map((p) => p.value)),
      [[0], [0], [-42], [0]],
    )
    t.deepEqual(byName('int')[0].tags, {
      big: '9007199254740993',
      host: 'int',
      kv: '{"values":[{"key":"k","value":{"intValue":"-1"}}]}',
      list: '{"values":[{"intValue":"9007199254740993"},{"stringValue":"x"}]}',
      neg: '-5',
      on: 'false',
      ratio: '0.25',
      raw: '"AAEC"',
      service: 'shop',
      shard: '7',
    })
    t.deepEqual(byName('total')[0].value, 12, "a cumulative stream's first point counts from its start")
    // Histograms: every observation in its bucket, the sum the histogram's when it has one.
    const values = (name: string) => byName(name).map((p) => p.value)
    const rounded = (name: string) => values(name).map((v) => Math.round(v * 1e6) / 1e6)
    t.deepEqual(rounded('latency'), [0.72093, 0.72093, 0.72093, 14.418605, 14.418605])
    t.true(Math.abs(values('latency').reduce((a, b) => a + b, 0) - 31) < 1e-9)
    t.deepEqual(values('bare'), [10, 10], "the bucket's midpoint")
    // Scale 1: bounds are powers of 2^(1/2); the zero bucket holds 0.
    t.deepEqual(rounded('exp'), [-1.207107, 0, 0.853553, 1.207107, 1.207107])
    t.deepEqual(fromProto.refused.map((r) => r.metric).sort(), ['huge', 'overflow', 'summ'])
    const states = Object.fromEntries(fromProto.state.map(([, v]) => [String(v.c ?? 'sum'), v]))
    t.deepEqual(states['18446744073709552000'], { s: `${now - 60}000000001`, c: 2 ** 64, sum: undefined, b: [2 ** 64] })
    t.deepEqual(states['5'], { s: `${now - 60}000000001`, c: 5, sum: 31, b: [3, 0, 2] })
    t.deepEqual(states.sum, { s: `${now - 60}000000001`, v: 12 })
  } finally {
    redis.disconnect()
  }
})
