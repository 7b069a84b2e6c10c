// Prometheus remote write 1.0 as a client sends it, for tests, benchmarks and drills: the WriteRequest message
// (prometheus/prometheus prompb, trimmed to what 1.0 carries) and a snappy-compressed body. Written apart from the
// service's decoder (shared/ingest/protocols/remote-write.ts) so that a test of it does not share its schema.
import protobuf from 'protobufjs'
import { compressSync } from 'snappy'

export const WriteRequest = protobuf
  .parse(
    `syntax = "proto3"; package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; }
message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
message Label { string name = 1; string value = 2; }
message Sample { double value = 1; int64 timestamp = 2; }`,
    { keepCase: true },
  )
  .root.lookupType('prometheus.WriteRequest')

export interface RemoteWriteSeries {
  labels: Array<{ name: string; value: string }>
  samples: Array<{ value: number; timestamp: number }>
}

/** The body of a remote-write request: the WriteRequest of `timeseries`, snappy-compressed. */
export function remoteWriteBody(timeseries: RemoteWriteSeries[]): Uint8Array<ArrayBuffer> {
  return new Uint8Array(compressSync(Buffer.from(WriteRequest.encode(WriteRequest.fromObject({ timeseries })).finish())))
}
