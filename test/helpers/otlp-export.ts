// What an OpenTelemetry SDK's protobuf exporter (`@opentelemetry/exporter-metrics-otlp-proto`) sends, captured from
// the exporter itself by a listener on 127.0.0.1: tests and benchmarks send exactly the bytes a real client does.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'

/** The one export body of a MeterProvider with `resource`, after `record` has recorded on it. */
export async function capturedExport(
  resource: Record<string, string | number>,
  record: (provider: MeterProvider) => void,
): Promise<Buffer> {
  let body: Buffer | undefined
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      body = Buffer.concat(chunks)
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const exporter = new OTLPMetricExporter({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics` })
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
    const provider = new MeterProvider({ resource: resourceFromAttributes(resource), readers: [reader] })
    record(provider)
    await provider.forceFlush()
    await provider.shutdown()
  } finally {
    server.close()
  }
  if (!body?.length) throw new Error('the OTLP exporter sent nothing')
  return body
}
