// Prometheus remote write 1.0 (docs/decisions.md §21): a snappy block-compressed protobuf WriteRequest. Every
// sample of a series becomes a gauge observation of the stat `__name__`, its other labels the series' tags
// (docs/decisions.md §24, stat-name.ts); millisecond timestamps are truncated to seconds. Stale markers (a NaN with Prometheus'
// own bit pattern, sent when a series disappears) are dropped on purpose: they say "no value", not a value.
// Any other sample the number rules refuse (NaN, Inf, out of range, out of window) refuses the request,
// naming the series, with a 400, which Prometheus does not retry.
import protobuf from 'protobufjs'
import { invalid, tooLarge } from '../../errors.js'
import { parseNumber } from '../numbers.js'
import type { ValidPoint } from '../point.js'
import { parseTimestamp } from '../timestamps.js'
import { protocolSeries } from './stat-name.js'
import { CHUNK, yieldToEventLoop } from './admit.js'
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
const TimeSeries = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('prometheus.TimeSeries')

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

/** The WriteRequest a remote-write body holds, decompressed; throws on a body that is not snappy or too large. */
export async function uncompressRemoteWrite(body: Buffer): Promise<Buffer> {
  try {
    const length = snappyUncompressedLength(body)
    if (length > REMOTE_WRITE_MAX_UNCOMPRESSED)
      throw tooLarge(`request body too large: ${length} bytes uncompressed, at most ${REMOTE_WRITE_MAX_UNCOMPRESSED}`)
    return await snappyUncompress(body)
  } catch (err) {
    if ((err as { kind?: string }).kind === 'too_large') throw err
    throw invalid('malformed_protobuf', `request body is not snappy-compressed (block format): ${(err as Error).message}`)
  }
}

const malformed = (err: unknown) =>
  invalid('malformed_protobuf', `request body is not a remote-write WriteRequest: ${(err as Error).message}`)

/**
 * The samples of a WriteRequest, and how many of them are stale markers, read off the wire format without
 * decoding a message (1.5 million samples decoded at once held 1.27 GB), so that the request
 * can be refused by its size before anything is built. Yields to the event loop every CHUNK series.
 */
export async function countSamples(bytes: Uint8Array): Promise<{ samples: number; stale: number }> {
  const r = protobuf.Reader.create(bytes)
  let samples = 0
  let stale = 0
  let series = 0
  try {
    while (r.pos < r.len) {
      const tag = r.uint32()
      if (tag !== 0x0a) {
        r.skipType(tag & 7)
        continue
      }
      if (++series % CHUNK === 0) await yieldToEventLoop()
      const seriesEnd = r.uint32() + r.pos
      while (r.pos < seriesEnd) {
        const field = r.uint32()
        if (field !== 0x12) {
          r.skipType(field & 7)
          continue
        }
        samples++
        const sampleEnd = r.uint32() + r.pos
        while (r.pos < sampleEnd) {
          const f = r.uint32()
          // value (field 1, 64-bit): Prometheus' stale marker is the NaN 0x7ff0000000000002, little-endian.
          if (f === 0x09) {
            const low = r.fixed32()
            if (r.fixed32() === 0x7ff00000 && low === 2) stale++
          } else r.skipType(f & 7)
        }
        if (r.pos !== sampleEnd) throw new Error('sample overruns its length')
      }
      if (r.pos !== seriesEnd) throw new Error('series overruns its length')
    }
  } catch (err) {
    throw malformed(err)
  }
  return { samples, stale }
}

/**
 * Reads a WriteRequest into validated gauge points, one series at a time, yielding to the event loop every
 * CHUNK samples; throws on a series it cannot take.
 */
export async function decodeRemoteWrite(bytes: Uint8Array, nowSeconds: number): Promise<DecodedWrite> {
  const out: DecodedWrite = { points: [], seriesOf: [], staleDropped: 0 }
  const r = protobuf.Reader.create(bytes)
  let sinceYield = 0
  while (r.pos < r.len) {
    let s: Series
    try {
      const tag = r.uint32()
      if (tag !== 0x0a) {
        r.skipType(tag & 7)
        continue
      }
      // The decoded message is read as it is: toObject() would copy every series again (tens of ms per 10,000).
      s = TimeSeries.decode(r, r.uint32()) as unknown as Series
    } catch (err) {
      throw malformed(err)
    }
    decodeSeries(s, nowSeconds, out)
    sinceYield += s.samples?.length ?? 0
    if (sinceYield >= CHUNK) {
      sinceYield = 0
      await yieldToEventLoop()
    }
  }
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
  const name = protocolSeries(metric, tags)
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
    out.points.push({ ...name.value, kind: 'gauge', value: checked.value, t: t.value, ikey: undefined })
    out.seriesOf.push(shown)
  }
}
