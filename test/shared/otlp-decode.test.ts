// OTLP protobuf bodies as the OpenTelemetry exporter sends them (docs/decisions.md §25), decoded with 64-bit
// integers as BigInts: integer attributes (alone and inside arrays) read as their decimal text, as in OTLP's JSON
// and as before, timestamps to the second, and a cumulative stream keyed by that same text.
import test from 'ava'
import type { MeterProvider } from '@opentelemetry/sdk-metrics'
import { convertOtlp, decodeOtlp } from '../../shared/ingest/protocols/otlp.js'
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
