// OTLP/HTTP metrics (docs/decisions.md §25): ExportMetricsServiceRequest in protobuf or JSON turned into points.
// Gauge -> gauge; monotonic Sum -> counter (cumulative points differenced per stream, resets detected);
// non-monotonic Sum -> gauge; Histogram and ExponentialHistogram -> gauge observations whose count and sum are
// the histogram's and whose values sit in its buckets (so the stat's percentile sketch follows the buckets).
// Every point passes validatePoint, the rules of every write (§I-2.2); a point that fails is refused alone
// and counted in OTLP's partial_success.
//
// Cumulative streams keep their last point in Redis (one key a stream, 7 days), so every web process
// differences against the same state; the state moves only after the request's points are stored, so a
// refused request changes nothing. Two exports of one stream at the same instant to two processes may both
// difference against the same state: OTLP exporters send one stream from one process, serially.
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import protobuf from 'protobufjs'
import { AppError } from '../../errors.js'
import { validatePoint, type ValidPoint } from '../point.js'
import { protocolSeries } from './stat-name.js'

// The messages of opentelemetry-proto v1.x this adapter reads (field numbers as in metrics.proto, common.proto,
// resource.proto and metrics_service.proto; enums read as their integers). Unknown fields are skipped.
const PROTO = `syntax = "proto3"; package otlp;
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message ExportMetricsServiceResponse { ExportMetricsPartialSuccess partial_success = 1; }
message ExportMetricsPartialSuccess { int64 rejected_data_points = 1; string error_message = 2; }
message Status { int32 code = 1; string message = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; }
message Metric { string name = 1; string description = 2; string unit = 3;
  oneof data { Gauge gauge = 5; Sum sum = 7; Histogram histogram = 9; ExponentialHistogram exponential_histogram = 10; Summary summary = 11; } }
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; int32 aggregation_temporality = 2; bool is_monotonic = 3; }
message Histogram { repeated HistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message ExponentialHistogram { repeated ExponentialHistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message Summary { repeated SummaryDataPoint data_points = 1; }
message NumberDataPoint { repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  oneof value { double as_double = 4; sfixed64 as_int = 6; } uint32 flags = 8; }
message HistogramDataPoint { repeated KeyValue attributes = 9; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  fixed64 count = 4; optional double sum = 5; repeated fixed64 bucket_counts = 6; repeated double explicit_bounds = 7; uint32 flags = 10;
  optional double min = 11; optional double max = 12; }
message Buckets { sint32 offset = 1; repeated uint64 bucket_counts = 2; }
message ExponentialHistogramDataPoint { repeated KeyValue attributes = 1; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  fixed64 count = 4; optional double sum = 5; sint32 scale = 6; fixed64 zero_count = 7; Buckets positive = 8; Buckets negative = 9;
  uint32 flags = 10; optional double min = 12; optional double max = 13; }
message SummaryDataPoint { repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3; }`

const root = protobuf.parse(PROTO).root
const Request = root.lookupType('otlp.ExportMetricsServiceRequest')
const Response = root.lookupType('otlp.ExportMetricsServiceResponse')
const Status = root.lookupType('otlp.Status')

/** A 64-bit integer: a decimal string or a number in JSON, a BigInt from protobuf (decodeOtlp). */
type Int = string | number | bigint
interface KeyValue {
  key: string
  value?: Record<string, unknown>
}
interface NumberPoint {
  attributes?: KeyValue[]
  startTimeUnixNano?: Int
  timeUnixNano?: Int
  asDouble?: number
  asInt?: Int
  flags?: number
}
interface HistogramPoint {
  attributes?: KeyValue[]
  startTimeUnixNano?: Int
  timeUnixNano?: Int
  count?: Int
  sum?: number
  bucketCounts?: Int[]
  explicitBounds?: number[]
  flags?: number
  min?: number
  max?: number
}
interface ExpPoint extends Omit<HistogramPoint, 'bucketCounts' | 'explicitBounds'> {
  scale?: number
  zeroCount?: Int
  positive?: { offset?: number; bucketCounts?: Int[] }
  negative?: { offset?: number; bucketCounts?: Int[] }
}
interface Metric {
  name?: string
  gauge?: { dataPoints?: NumberPoint[] }
  sum?: { dataPoints?: NumberPoint[]; aggregationTemporality?: number; isMonotonic?: boolean }
  histogram?: { dataPoints?: HistogramPoint[]; aggregationTemporality?: number }
  exponentialHistogram?: { dataPoints?: ExpPoint[]; aggregationTemporality?: number }
  summary?: { dataPoints?: unknown[] }
}
export interface OtlpRequest {
  resourceMetrics?: Array<{
    resource?: { attributes?: KeyValue[] }
    scopeMetrics?: Array<{ scope?: { name?: string }; metrics?: Metric[] }>
  }>
}

export type OtlpFormat = 'protobuf' | 'json'

/**
 * The request body decoded into the proto3 JSON shape (lowerCamelCase keys; 64-bit integers as strings in JSON,
 * as BigInts from protobuf: exact, and far cheaper to make than their decimal text, which a cumulative stream's
 * start time alone needs, where String() gives the same text).
 */
export function decodeOtlp(body: Buffer, format: OtlpFormat): OtlpRequest {
  try {
    if (format === 'json') {
      const parsed = JSON.parse(body.toString('utf8') || '{}')
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object')
      return parsed as OtlpRequest
    }
    return Request.toObject(Request.decode(body), { longs: BigInt, bytes: String, defaults: false }) as OtlpRequest
  } catch (e) {
    throw new AppError(
      'invalid',
      'malformed_body',
      `request body is not an OTLP ExportMetricsServiceRequest in ${format === 'json' ? 'JSON' : 'protobuf'}: ${(e as Error).message}`,
    )
  }
}

/** The 200 answer: empty on full success, partial_success when points were refused. */
export function encodeResponse(format: OtlpFormat, rejected: number, message: string): Buffer | Record<string, unknown> {
  const partial = rejected ? { partialSuccess: { rejectedDataPoints: String(rejected), errorMessage: message } } : {}
  if (format === 'json') return partial
  return Buffer.from(
    Response.encode(
      Response.fromObject(rejected ? { partialSuccess: { rejectedDataPoints: rejected, errorMessage: message } } : {}),
    ).finish(),
  )
}

/** A refusal as OTLP's google.rpc.Status (code: the gRPC code of the HTTP status). */
export function encodeStatus(format: OtlpFormat, httpStatus: number, message: string): Buffer | Record<string, unknown> {
  const code =
    httpStatus === 400
      ? 3
      : httpStatus === 401
        ? 16
        : httpStatus === 403
          ? 7
          : httpStatus === 413
            ? 8
            : httpStatus === 429
              ? 8
              : httpStatus === 503
                ? 14
                : 13
  if (format === 'json') return { code, message }
  return Buffer.from(Status.encode(Status.fromObject({ code, message })).finish())
}

/** A point refused alone, with why. */
export interface Refusal {
  metric: string
  reason: string
}

/** A cumulative stream's last point, kept between requests. */
interface StreamState {
  s: string
  v?: number
  c?: number
  sum?: number
  b?: number[]
}

export interface Converted {
  points: ValidPoint[]
  /** The stat and metric each point came from, for a kind conflict's message. */
  metricOf: string[]
  refused: Refusal[]
  /** Data points in the request (each histogram point counts once). */
  total: number
  /** State to save once the points are stored. */
  state: Map<string, StreamState>
}

/** At most this many observations stand for one histogram point (its count since the previous export). */
export const MAX_HISTOGRAM_OBSERVATIONS = 10_000
const STATE_TTL_SECONDS = 7 * 86_400

// The last conversion: an exporter stamps every point of an export with the same time, so most points repeat it.
let lastNs: Int | undefined
let lastSeconds: number | undefined

const seconds = (ns: Int | undefined): number | undefined => {
  if (ns === undefined || ns === '' || ns === '0' || ns === 0 || ns === 0n) return undefined
  if (ns === lastNs) return lastSeconds
  const s = Number((typeof ns === 'bigint' ? ns : BigInt(String(ns).split('.')[0])) / 1_000_000_000n)
  lastNs = ns
  lastSeconds = s
  return s
}

// An integer inside an array or key-value list attribute is written as its decimal text, as in OTLP's JSON.
const decimalInts = (_key: string, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)

function attrValue(v: Record<string, unknown> | undefined): string {
  if (!v) return ''
  const x = v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue
  if (x !== undefined) return String(x)
  return JSON.stringify(v.arrayValue ?? v.kvlistValue ?? v.bytesValue ?? '', decimalInts)
}

/** Resource attributes that describe the exporting library, not the series: not tags. */
const NOT_TAGS = /^telemetry\.(sdk|distro)\./

/** A resource's attributes as tag pairs (those describing the exporting library left out, `service.name` as `service`). */
function resourcePairs(resource: KeyValue[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  for (const a of resource) if (!NOT_TAGS.test(a.key)) pairs.push([a.key === 'service.name' ? 'service' : a.key, attrValue(a.value)])
  return pairs
}

/** The series of a metric from its resource's pairs (resourcePairs) and its point's attributes. */
function seriesOfPoint(metric: string, resource: Array<[string, string]>, point: KeyValue[]) {
  const tags = resource.slice()
  for (const a of point) tags.push([a.key, attrValue(a.value)])
  return protocolSeries(metric, tags)
}

/**
 * The series of a metric and its attributes: the one place attributes become tags (docs/decisions.md §24, §25):
 * resource and point attributes alike, `service.name` as `service`; the stat is the instrument's name.
 */
export function otlpStatName(metric: string, resource: KeyValue[], point: KeyValue[]) {
  return seriesOfPoint(metric, resourcePairs(resource), point)
}

type OtlpSeries = ReturnType<typeof otlpStatName>

const streamKey = (prefix: string, accountId: string, identity: unknown) =>
  `${prefix}:otlp:${accountId}:${createHash('sha1').update(JSON.stringify(identity, decimalInts)).digest('base64url')}`

/**
 * The request's points, with the points refused alone and the cumulative state to save. `prefix` names the Redis
 * keys of this deployment.
 */
export async function convertOtlp(req: OtlpRequest, accountId: string, redis: Redis, prefix: string): Promise<Converted> {
  const out: Converted = { points: [], metricOf: [], refused: [], total: 0, state: new Map() }
  // First pass: the cumulative streams' keys, read in one round trip.
  interface Pending {
    metric: string
    statName: ReturnType<typeof otlpStatName>
    run: (prev: StreamState | undefined) => void
    key?: string
  }
  const pending: Pending[] = []
  const now = Math.floor(Date.now() / 1000)
  for (const rm of req.resourceMetrics ?? []) {
    const resource = rm.resource?.attributes ?? []
    const pairs = resourcePairs(resource)
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const metric = m.name ?? ''
        const identity = (p: { attributes?: KeyValue[] }) => [resource, sm.scope?.name ?? '', metric, p.attributes ?? []]
        const add = (p: { attributes?: KeyValue[] }, cumulative: boolean, run: Pending['run']) => {
          out.total++
          pending.push({
            metric,
            statName: seriesOfPoint(metric, pairs, p.attributes ?? []),
            run,
            key: cumulative ? streamKey(prefix, accountId, identity(p)) : undefined,
          })
        }
        if (m.gauge || (m.sum && !m.sum.isMonotonic)) {
          for (const p of (m.gauge ?? m.sum)!.dataPoints ?? []) add(p, false, () => emit(out, pending, p, 'gauge', numberOf(p), now))
        } else if (m.sum) {
          const cumulative = m.sum.aggregationTemporality === 2
          for (const p of m.sum.dataPoints ?? [])
            add(p, cumulative, (prev) => {
              const v = numberOf(p)
              if (!cumulative) return emit(out, pending, p, 'counter', v, now)
              const start = String(p.startTimeUnixNano ?? '0')
              const key = pending[pending.length - 1].key!
              out.state.set(key, { s: start, v })
              const delta = !prev ? (start === '0' ? null : v) : prev.s !== start || v < prev.v! ? v : v - prev.v!
              // A zero difference adds nothing to a counter: not stored (an idle stream is exported every interval).
              if (delta) emit(out, pending, p, 'counter', delta, now)
            })
        } else if (m.histogram || m.exponentialHistogram) {
          const h = (m.histogram ?? m.exponentialHistogram)!
          const cumulative = h.aggregationTemporality === 2
          for (const p of (h.dataPoints ?? []) as Array<HistogramPoint & ExpPoint>)
            add(p, cumulative, (prev) =>
              histogram(out, pending, p, !!m.exponentialHistogram, cumulative ? prev : undefined, cumulative, now),
            )
        } else if (m.summary) {
          for (const _ of m.summary.dataPoints ?? []) {
            out.total++
            out.refused.push({ metric, reason: 'Summary metrics are not accepted (send a Histogram)' })
          }
        } else {
          out.refused.push({ metric, reason: 'a metric without data' })
        }
      }
    }
  }
  const keys = [...new Set(pending.flatMap((p) => (p.key ? [p.key] : [])))]
  const saved = await Promise.all(keys.map((k) => redis.get(k)))
  const states = new Map(keys.map((k, i) => [k, saved[i] ? (JSON.parse(saved[i]!) as StreamState) : undefined]))
  // Second pass, in order: each point against its stream's state (updated as the request goes, for a request
  // carrying several points of one stream).
  const run = pending.splice(0)
  for (const p of run) {
    pending.push(p)
    if (!p.statName.ok) {
      out.refused.push({ metric: p.metric, reason: p.statName.message })
      continue
    }
    p.run(p.key ? (out.state.get(p.key) ?? states.get(p.key)) : undefined)
  }
  return out
}

function numberOf(p: NumberPoint): number {
  if (p.asDouble !== undefined) return Number(p.asDouble)
  if (p.asInt !== undefined) return Number(p.asInt)
  return 0
}

/** One point through validatePoint (every write rule, §I-2.2): stored, or refused alone with why. */
function emit(
  out: Converted,
  pending: Array<{ metric: string; statName: OtlpSeries }>,
  p: NumberPoint,
  kind: 'counter' | 'gauge',
  value: number,
  now: number,
) {
  const current = pending[pending.length - 1]
  // NO_RECORDED_VALUE: a point that says the stream has no value now (a staleness marker); nothing to store.
  if ((p.flags ?? 0) & 1) return
  if (!current.statName.ok) return
  const series = current.statName.value
  try {
    const point = validatePoint(
      kind === 'counter'
        ? { stat: series.name, count: value, t: seconds(p.timeUnixNano) }
        : { stat: series.name, value, t: seconds(p.timeUnixNano) },
      { countDefaultsToOne: false },
      now,
    )
    if (series.tags) {
      point.tags = series.tags
      point.series = series.series
    }
    out.points.push(point)
    out.metricOf.push(current.metric)
  } catch (e) {
    if (!(e instanceof AppError)) throw e
    out.refused.push({ metric: current.metric, reason: e.message })
  }
}

interface Bucket {
  lower: number | undefined
  upper: number | undefined
}

/**
 * A histogram point's observations since the previous one: in each bucket, its count of the bucket's midpoint
 * (an open bucket's finite bound, or min/max when given), all shifted by one amount so that their sum is the
 * histogram's. Cumulative points are differenced bucket by bucket against the stream's last point.
 */
function histogram(
  out: Converted,
  pending: Array<{ metric: string; statName: OtlpSeries; key?: string }>,
  p: HistogramPoint & ExpPoint,
  exponential: boolean,
  prev: StreamState | undefined,
  cumulative: boolean,
  now: number,
) {
  const current = pending[pending.length - 1]
  const { buckets, counts } = exponential ? expBuckets(p) : explicitBuckets(p)
  let sum = p.sum === undefined ? undefined : Number(p.sum)
  const start = String(p.startTimeUnixNano ?? '0')
  if (cumulative) {
    out.state.set(current.key!, { s: start, c: Number(p.count ?? 0), sum, b: [...counts] })
    if (!prev && start === '0') return
    const reset = !prev || prev.s !== start || prev.b?.length !== counts.length || counts.some((c, i) => c < prev.b![i])
    if (!reset) {
      for (let i = 0; i < counts.length; i++) counts[i] -= prev!.b![i]
      if (sum !== undefined && prev!.sum !== undefined) sum -= prev!.sum
    }
  }
  if ((p.flags ?? 0) & 1) return
  const n = counts.reduce((a, b) => a + b, 0)
  if (n === 0) return
  if (n > MAX_HISTOGRAM_OBSERVATIONS) {
    out.refused.push({
      metric: current.metric,
      reason: `a histogram point of ${n} observations since the previous one; at most ${MAX_HISTOGRAM_OBSERVATIONS} (export more often)`,
    })
    return
  }
  // Each observation starts at its bucket's midpoint (bounds narrowed by min and max); the difference from the
  // histogram's sum is then spread over them in proportion to the room each has towards its bucket's edge, so
  // every value stays inside its bucket and the sum is the histogram's (when the buckets can hold it).
  const obs: Array<{ mid: number; lo: number; hi: number }> = []
  for (let i = 0; i < counts.length; i++) {
    if (!counts[i]) continue
    const lo = Math.max(buckets[i].lower ?? Number.NEGATIVE_INFINITY, p.min ?? Number.NEGATIVE_INFINITY)
    const hi = Math.min(buckets[i].upper ?? Number.POSITIVE_INFINITY, p.max ?? Number.POSITIVE_INFINITY)
    const mid = Number.isFinite(lo) && Number.isFinite(hi) ? (lo + hi) / 2 : Number.isFinite(lo) ? lo : Number.isFinite(hi) ? hi : 0
    for (let k = 0; k < counts[i]; k++) obs.push({ mid, lo: Number.isFinite(lo) ? lo : mid, hi: Number.isFinite(hi) ? hi : mid })
  }
  const residual = sum === undefined ? 0 : sum - obs.reduce((a, o) => a + o.mid, 0)
  const room = obs.map((o) => (residual > 0 ? o.hi - o.mid : o.mid - o.lo))
  const total = room.reduce((a, b) => a + b, 0)
  const share = total > 0 ? Math.min(1, Math.abs(residual) / total) * Math.sign(residual) : 0
  for (let i = 0; i < obs.length; i++)
    emit(out, pending, { timeUnixNano: p.timeUnixNano, flags: 0 }, 'gauge', obs[i].mid + room[i] * share, now)
}

/** Explicit buckets: bucket i is (bounds[i-1], bounds[i]], the first open below, the last open above. */
function explicitBuckets(p: HistogramPoint): { buckets: Bucket[]; counts: number[] } {
  const bounds = (p.explicitBounds ?? []).map(Number)
  const counts = (p.bucketCounts ?? []).map(Number)
  return {
    buckets: counts.map((_, i) => ({ lower: i === 0 ? undefined : bounds[i - 1], upper: i < bounds.length ? bounds[i] : undefined })),
    counts,
  }
}

/** Exponential buckets: positive i is (base^i, base^(i+1)], negative i its mirror, then the zero bucket. */
function expBuckets(p: ExpPoint): { buckets: Bucket[]; counts: number[] } {
  const base = 2 ** (2 ** -(p.scale ?? 0))
  const buckets: Bucket[] = []
  const counts: number[] = []
  const side = (b: ExpPoint['positive'], sign: 1 | -1) =>
    (b?.bucketCounts ?? []).forEach((c, i) => {
      const off = (b?.offset ?? 0) + i
      buckets.push(sign > 0 ? { lower: base ** off, upper: base ** (off + 1) } : { lower: -(base ** (off + 1)), upper: -(base ** off) })
      counts.push(Number(c))
    })
  side(p.negative, -1)
  buckets.push({ lower: 0, upper: 0 })
  counts.push(Number(p.zeroCount ?? 0))
  side(p.positive, 1)
  return { buckets, counts }
}

/** Saves the cumulative streams' last points, after their points were stored (one key each: a cluster's slots differ). */
export async function saveStreams(redis: Redis, state: Map<string, StreamState>): Promise<void> {
  await Promise.all([...state].map(([k, v]) => redis.set(k, JSON.stringify(v), 'EX', STATE_TTL_SECONDS)))
}
