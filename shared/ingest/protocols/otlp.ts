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
import protobuf, { type Long } from 'protobufjs'
import { AppError } from '../../errors.js'
import { validatePoint, type ValidPoint } from '../point.js'
import { protocolSeries } from './stat-name.js'

// The messages of opentelemetry-proto v1.x this adapter reads (field numbers as in metrics.proto, common.proto,
// resource.proto and metrics_service.proto; enums read as their integers). Unknown fields are skipped.
// AnyValue's value and NumberDataPoint's value are declared as proto3 `optional` fields, not as their oneofs:
// the same bytes on the wire and the field sent still the message's own property, without protobufjs' oneof
// setter, which deletes every other member of the oneof for each value read (a third of decoding an export).
// A value sent twice over (two members, which no exporter sends) is read in attrValue's and numberOf's order
// rather than the last one sent.
const PROTO = `syntax = "proto3"; package otlp;
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message ExportMetricsServiceResponse { ExportMetricsPartialSuccess partial_success = 1; }
message ExportMetricsPartialSuccess { int64 rejected_data_points = 1; string error_message = 2; }
message Status { int32 code = 1; string message = 2; }
message AnyValue { optional string string_value = 1; optional bool bool_value = 2; optional int64 int_value = 3;
  optional double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; optional bytes bytes_value = 7; }
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
  optional double as_double = 4; optional sfixed64 as_int = 6; uint32 flags = 8; }
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
/** The request's message type, for tests that encode bodies no exporter sends (64-bit extremes, every attribute type). */
export const ExportMetricsServiceRequest = Request
const Response = root.lookupType('otlp.ExportMetricsServiceResponse')
const Status = root.lookupType('otlp.Status')

/**
 * A 64-bit integer: a decimal string or a number in JSON; from protobuf, a Long (protobufjs with the `long`
 * package, its dependency: fixed64 and uint64 unsigned, int64 and sfixed64 signed), or a number without it.
 */
type Int = string | number | Long
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
  /** sum, min and max: proto3 `optional`, null on a decoded message without them. */
  sum?: number | null
  bucketCounts?: Int[]
  explicitBounds?: number[]
  flags?: number
  min?: number | null
  max?: number | null
}
interface ExpPoint extends Omit<HistogramPoint, 'bucketCounts' | 'explicitBounds'> {
  scale?: number
  zeroCount?: Int
  positive?: { offset?: number; bucketCounts?: Int[] } | null
  negative?: { offset?: number; bucketCounts?: Int[] } | null
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
 * The request body decoded: JSON as parsed (the proto3 JSON shape: lowerCamelCase keys, 64-bit integers as
 * strings), protobuf as the decoded message itself, whose fields have the same names. The message is read as it
 * is, not copied into plain objects (toObject, with every 64-bit integer made a BigInt, doubled the cost of a
 * point); how its fields differ from JSON's (absent fields inherited from its prototype, 64-bit integers as
 * Longs) is the business of the few readers below: own(), toNumber(), seconds(), attrValue(), plain().
 */
export function decodeOtlp(body: Buffer, format: OtlpFormat): OtlpRequest {
  try {
    if (format === 'json') {
      const parsed = JSON.parse(body.toString('utf8') || '{}')
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object')
      return parsed as OtlpRequest
    }
    return Request.decode(body) as unknown as OtlpRequest
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

const LongClass = protobuf.util.Long as unknown as (new (...args: never[]) => Long) | undefined
const isLong = (x: unknown): x is Long => LongClass !== undefined && x instanceof LongClass

/**
 * Whether a field was sent: a decoded message inherits every field it lacks from its prototype (a string's '',
 * a number's 0), so an `optional` field, which may be sent as 0 or '', is known by being the message's own
 * property; in parsed JSON a field is own exactly when it was sent.
 */
const own = (o: object, field: string) => Object.hasOwn(o, field)

/** A 64-bit integer as a number: Number() for JSON's text and numbers; a Long rounded the same way (one rounding). */
function toNumber(x: Int | null | undefined): number {
  if (!isLong(x)) return Number(x)
  return (x.unsigned ? x.high >>> 0 : x.high) * 4_294_967_296 + (x.low >>> 0)
}

/**
 * Whole seconds of an unsigned 64-bit count of nanoseconds, high and low halves, exactly: long division by 1e9 in
 * 16-bit digits (every step under 2^53). The nearest double of a time in nanoseconds is off by up to 128 ns,
 * enough to cross a second.
 */
function nanosToSeconds(high: number, low: number): number {
  let q = 0
  let r = 0
  for (const digit of [high >>> 16, high & 0xffff, low >>> 16, low & 0xffff]) {
    const x = r * 65_536 + digit
    const d = Math.floor(x / 1e9)
    r = x - d * 1e9
    q = q * 65_536 + d
  }
  return q
}

// The last conversions: an exporter stamps every point of an export with the same time, so most points repeat it.
let lastHigh = 0
let lastLow = 0
let lastLongSeconds = 0
let lastNs: string | number | undefined
let lastSeconds: number | undefined

/** A time in nanoseconds (OTLP's, unsigned) as whole seconds, rounded down; undefined when absent or zero. */
const seconds = (ns: Int | null | undefined): number | undefined => {
  if (isLong(ns)) {
    if (ns.high === 0 && ns.low === 0) return undefined
    if (ns.high !== lastHigh || ns.low !== lastLow) {
      lastLongSeconds = nanosToSeconds(ns.high >>> 0, ns.low >>> 0)
      lastHigh = ns.high
      lastLow = ns.low
    }
    return lastLongSeconds
  }
  if (ns == null || ns === '' || ns === '0' || ns === 0) return undefined
  if (ns === lastNs) return lastSeconds
  const s = Number(BigInt(String(ns).split('.')[0]) / 1_000_000_000n)
  lastNs = ns
  lastSeconds = s
  return s
}

const TO_OBJECT = { longs: BigInt, bytes: String, defaults: false }
const AnyValue = root.lookupType('otlp.AnyValue')
const KeyValueType = root.lookupType('otlp.KeyValue')

/**
 * Attributes in the proto3 JSON shape, as a stream's identity holds them: JSON's as sent; a decoded message's
 * copied into it (64-bit integers as BigInts, written as decimalInts writes them, bytes as base64), the text
 * they were always keyed by.
 */
const plain = (attributes: KeyValue[]): unknown[] =>
  attributes.map((a) => (a instanceof protobuf.Message ? KeyValueType.toObject(a, TO_OBJECT) : a))

// An integer inside an array or key-value list attribute is written as its decimal text, as in OTLP's JSON.
const decimalInts = (_key: string, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)

function attrValue(v: Record<string, unknown> | null | undefined): string {
  if (!v) return ''
  if (v instanceof protobuf.Message) {
    // A message holds the value sent as its own property (every other field is its prototype's default).
    if (own(v, 'stringValue')) return v.stringValue as string
    if (own(v, 'intValue')) return String(v.intValue) // a Long's decimal text
    if (own(v, 'doubleValue')) return String(v.doubleValue)
    if (own(v, 'boolValue')) return String(v.boolValue)
    v = AnyValue.toObject(v, TO_OBJECT)
  }
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
    let resourceIdentity: unknown[] | undefined
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const metric = m.name ?? ''
        const identity = (p: { attributes?: KeyValue[] }) => [
          (resourceIdentity ??= plain(resource)),
          sm.scope?.name ?? '',
          metric,
          plain(p.attributes ?? []),
        ]
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
  if (own(p, 'asDouble')) return Number(p.asDouble)
  if (own(p, 'asInt')) return toNumber(p.asInt)
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
  let sum = p.sum == null ? undefined : Number(p.sum)
  const start = String(p.startTimeUnixNano ?? '0')
  if (cumulative) {
    out.state.set(current.key!, { s: start, c: toNumber(p.count ?? 0), sum, b: [...counts] })
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
  const counts = (p.bucketCounts ?? []).map((c) => toNumber(c))
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
      counts.push(toNumber(c))
    })
  side(p.negative, -1)
  buckets.push({ lower: 0, upper: 0 })
  counts.push(toNumber(p.zeroCount ?? 0))
  side(p.positive, 1)
  return { buckets, counts }
}

/** Saves the cumulative streams' last points, after their points were stored (one key each: a cluster's slots differ). */
export async function saveStreams(redis: Redis, state: Map<string, StreamState>): Promise<void> {
  await Promise.all([...state].map(([k, v]) => redis.set(k, JSON.stringify(v), 'EX', STATE_TTL_SECONDS)))
}
