// Prometheus remote write 1.0 (decisions.md 21): a snappy block-compressed protobuf WriteRequest. Every
// sample of a series becomes a gauge observation of the stat named from `__name__` and the other labels
// (stat-name.ts); millisecond timestamps are truncated to seconds. Stale markers (a NaN with Prometheus'
// own bit pattern, sent when a series disappears) are dropped on purpose: they say "no value", not a value.
// Any other sample the number rules refuse (NaN, Inf, out of range, out of window) refuses the request,
// naming the series, with a 400, which Prometheus does not retry.
import protobuf from 'protobufjs'
import { invalid, tooLarge } from '../../errors.js'
import { parseNumber } from '../numbers.js'
import type { ValidPoint } from '../point.js'
import { parseTimestamp } from '../timestamps.js'
import { protocolStatName } from './stat-name.js'
import { snappyUncompress, snappyUncompressedLength } from './snappy.js'

// prometheus/prometheus prompb/remote.proto and types.proto, trimmed to what 1.0 carries; protobufjs skips
// the fields left out (metadata, exemplars, native histograms).
const PROTO = `
syntax = "proto3";
package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; }
message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
message Label { string name = 1; string value = 2; }
message Sample { double value = 1; int64 timestamp = 2; }
`
const WriteRequest = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('prometheus.WriteRequest')

/** int64 as protobufjs decodes it: a Long where the `long` package is present, else a number. */
type Int64 = number | { toNumber(): number }

interface Series {
  labels?: Array<{ name?: string; value?: string }>
  samples?: Array<{ value?: number; timestamp?: Int64 }>
}

/** Decompressed bytes a request may hold (the research note's guard against decompression bombs). */
export const REMOTE_WRITE_MAX_UNCOMPRESSED = 32 * 1024 * 1024

/** Prometheus' stale marker: a NaN whose bits are 0x7ff0000000000002 (value.StaleNaN). */
function isStaleMarker(value: number): boolean {
  if (!Number.isNaN(value)) return false
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, value)
  return view.getUint32(0) === 0x7ff00000 && view.getUint32(4) === 2
}

export interface DecodedWrite {
  points: ValidPoint[]
  /** The series (as `name{labels}`) each point came from. */
  seriesOf: string[]
  staleDropped: number
}

/** Reads a remote-write body into validated gauge points; throws on a body or series it cannot take. */
export async function decodeRemoteWrite(body: Buffer, nowSeconds: number): Promise<DecodedWrite> {
  let bytes: Buffer
  try {
    const length = snappyUncompressedLength(body)
    if (length > REMOTE_WRITE_MAX_UNCOMPRESSED) throw tooLarge(`request body too large: ${length} bytes uncompressed, at most ${REMOTE_WRITE_MAX_UNCOMPRESSED}`)
    bytes = await snappyUncompress(body)
  } catch (err) {
    if ((err as { kind?: string }).kind === 'too_large') throw err
    throw invalid('malformed_protobuf', `request body is not snappy-compressed (block format): ${(err as Error).message}`)
  }
  let series: Series[]
  try {
    // The decoded message is read as it is: toObject() would copy every series again (tens of ms per 10,000).
    series = (WriteRequest.decode(bytes) as unknown as { timeseries?: Series[] }).timeseries ?? []
  } catch (err) {
    throw invalid('malformed_protobuf', `request body is not a remote-write WriteRequest: ${(err as Error).message}`)
  }
  const out: DecodedWrite = { points: [], seriesOf: [], staleDropped: 0 }
  for (const s of series) decodeSeries(s, nowSeconds, out)
  return out
}

function decodeSeries(s: Series, nowSeconds: number, out: DecodedWrite): void {
  let metric: string | undefined
  const tags: Array<[string, string]> = []
  for (const l of s.labels ?? []) {
    if (l.name === '__name__') metric = l.value
    else if (l.name && l.value) tags.push([l.name, l.value])
  }
  const shown = `${metric ?? ''}{${tags.map(([k, v]) => `${k}="${v}"`).join(',')}}`
  const fail = (reason: string) => invalid('invalid_series', `series ${shown}: ${reason}`)
  if (!metric) throw fail('no __name__ label')
  const name = protocolStatName(metric, tags)
  if (!name.ok) throw fail(name.message)
  for (const sample of s.samples ?? []) {
    const value = sample.value ?? 0
    if (isStaleMarker(value)) {
      out.staleDropped++
      continue
    }
    const checked = parseNumber(value, 'value')
    if (!checked.ok) throw fail(checked.message)
    const ms = sample.timestamp ?? 0
    const t = parseTimestamp(Math.floor((typeof ms === 'number' ? ms : ms.toNumber()) / 1000), nowSeconds)
    if (!t.ok) throw fail(t.message)
    out.points.push({ name: name.value, kind: 'gauge', value: checked.value, t: t.value, ikey: undefined })
    out.seriesOf.push(shown)
  }
}
