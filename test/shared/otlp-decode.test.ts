// OTLP protobuf bodies as the OpenTelemetry exporter sends them (docs/decisions.md §25), decoded with 64-bit
// integers as BigInts: integer attributes (alone and inside arrays) read as their decimal text, as in OTLP's JSON
// and as before, timestamps to the second, and a cumulative stream keyed by that same text.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import test from 'ava'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { convertOtlp, decodeOtlp } from '../../shared/ingest/protocols/otlp.js'
import { createRedis } from '../../shared/redis.js'

/** What the protobuf exporter sends for what `record` records, captured on a loopback listener. */
async function exported(record: (provider: MeterProvider) => void): Promise<Buffer> {
  let body: Buffer | undefined
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      body = Buffer.concat(chunks)
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  try {
    const exporter = new OTLPMetricExporter({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics` })
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
    const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'shop', 'shard.id': 7 }), readers: [reader] })
    record(provider)
    await provider.forceFlush()
    await provider.shutdown()
  } finally {
    server.close()
  }
  return body!
}

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
