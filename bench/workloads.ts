// The requests each phase sends, and the load generator run as a child process.
import { capturedExport } from '../test/helpers/otlp-export.js'
import type { Children } from './procs.js'
import type { LoadConfig, LoadResult, RequestSpec } from './load.js'

const FORM = 'application/x-www-form-urlencoded'

/** Single-point /ez form posts: one request group per key, each cycling through `stats` stat names. */
export function singleGroups(keys: string[], statPrefix: string, stats: number): RequestSpec[][] {
  return keys.map((key) =>
    Array.from({ length: stats }, (_, k) => ({
      method: 'POST' as const,
      path: '/ez',
      headers: { 'Content-Type': FORM },
      body: `ezkey=${key}&stat=${statPrefix}${k}&count=1`,
    })),
  )
}

/** 100-point JSON batches on /ez: item i goes to stat `${statPrefix}${i % stats}`. */
export function batchGroups(keys: string[], statPrefix: string, stats: number, size = 100): RequestSpec[][] {
  return keys.map((key) => {
    const data = Array.from({ length: size }, (_, i) => ({ stat: `${statPrefix}${i % stats}`, count: 1 }))
    return [
      { method: 'POST' as const, path: '/ez', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ezkey: key, data }) },
    ]
  })
}

/** 1,000-point JSON batches on the v1 API (Bearer key): item i goes to stat `${statPrefix}${i % stats}`. */
export function v1BatchGroups(keys: string[], statPrefix: string, stats: number, size = 1000): RequestSpec[][] {
  return keys.map((key) => {
    const points = Array.from({ length: size }, (_, i) => ({ stat: `${statPrefix}${i % stats}`, count: 1 }))
    return [v1Points(key, points)]
  })
}

/** A `POST /api/v1/points` request of these points. */
export function v1Points(key: string, points: unknown[]): RequestSpec {
  return {
    method: 'POST' as const,
    path: '/api/v1/points',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ points }),
  }
}

/**
 * The three tags of a tagged point in the tagged phases (docs/decisions.md §24): series k of a stat is host
 * h<k>, in one region and one service, so that a tagged phase writes as many series as its untagged twin.
 */
export const benchTags = (k: number) => ({ host: `h${k}`, region: 'eu-west-1', service: 'checkout' })

/**
 * The series a tagged or untagged phase writes: untagged, `stats` stats `${statPrefix}${k}`; tagged, one stat
 * `${statPrefix}0` of `stats` series (benchTags(k)). The same number of series either way.
 */
export function phaseSeries(statPrefix: string, stats: number, tagged: boolean): Array<{ stat: string; tags?: Record<string, string> }> {
  return Array.from({ length: stats }, (_, k) => (tagged ? { stat: `${statPrefix}0`, tags: benchTags(k) } : { stat: `${statPrefix}${k}` }))
}

/** Single counter points on the v1 route `/api/v1/stats/:name/count`, one request group per key cycling through the series. */
export function v1SingleGroups(keys: string[], statPrefix: string, stats: number, tagged: boolean): RequestSpec[][] {
  const series = phaseSeries(statPrefix, stats, tagged)
  return keys.map((key) =>
    series.map((s) => ({
      method: 'POST' as const,
      path: `/api/v1/stats/${s.stat}/count`,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify(s.tags ? { count: 1, tags: s.tags } : { count: 1 }),
    })),
  )
}

/** `size`-point batches on `/api/v1/points`, point i to series i % stats of phaseSeries. */
export function v1SeriesBatchGroups(keys: string[], statPrefix: string, stats: number, tagged: boolean, size: number): RequestSpec[][] {
  const series = phaseSeries(statPrefix, stats, tagged)
  const points = Array.from({ length: size }, (_, i) => {
    const s = series[i % stats]
    return s.tags ? { stat: s.stat, count: 1, tags: s.tags } : { stat: s.stat, count: 1 }
  })
  return keys.map((key) => [v1Points(key, points)])
}

/** OTLP/HTTP protobuf requests (the body as an OpenTelemetry exporter sends it), one per key. */
export function otlpGroups(keys: string[], body: Buffer): RequestSpec[][] {
  const bodyBase64 = body.toString('base64')
  return keys.map((key) => [
    {
      method: 'POST' as const,
      path: '/otlp/v1/metrics',
      headers: { 'Content-Type': 'application/x-protobuf', Authorization: `Bearer ${key}` },
      bodyBase64,
    },
  ])
}

/** Runs bench/load.ts in its own process and returns its result. */
export async function runLoadProcess(children: Children, name: string, cfg: LoadConfig, onMeasure?: () => void): Promise<LoadResult> {
  // The config goes through stdin: batch bodies make it too large for an environment variable.
  const child = children.start(name, 'bench/load.ts', { NODE_ENV: 'production' }, JSON.stringify({ ...cfg, announceMeasure: !!onMeasure }))
  if (onMeasure) {
    const poll = setInterval(() => {
      if (child.lines.includes('measuring')) {
        clearInterval(poll)
        onMeasure()
      }
    }, 20)
    void child.exit.then(() => clearInterval(poll))
  }
  await child.exit
  const line = child.lines.find((l) => l.startsWith('{"connections"'))
  if (child.exited?.code !== 0 || !line) throw new Error(`load generator ${name} failed (code ${child.exited?.code}):\n${child.tail()}`)
  return JSON.parse(line) as LoadResult
}

/**
 * InfluxDB line protocol requests of `size` lines on /api/v2/write: line i is the gauge
 * `${measurement}.account_a<n>.stat_s<i % stats>`, the same shape and length as the InfluxDB reference's lines
 * (which need a distinct series per line, or InfluxDB would keep only the last point of a request).
 */
export function lineProtocolGroups(keys: string[], measurement: string, stats: number, size = 5000): RequestSpec[][] {
  return keys.map((key, a) => {
    const body = Array.from({ length: size }, (_, i) => `${measurement},account=a${a},stat=s${i % stats} value=1`).join('\n')
    return [
      {
        method: 'POST' as const,
        path: '/api/v2/write?precision=s',
        headers: { 'Content-Type': 'text/plain; charset=utf-8', Authorization: `Token ${key}` },
        body,
      },
    ]
  })
}

/** The stat names lineProtocolGroups writes, per account index, for creating them before the phase. */
export function lineProtocolStatNames(measurement: string, account: number, stats: number): string[] {
  return Array.from({ length: stats }, (_, k) => `${measurement}.account_a${account}.stat_s${k}`)
}

/**
 * The body an OpenTelemetry SDK's protobuf exporter (`@opentelemetry/exporter-metrics-otlp-proto`) sends for
 * `metrics` gauges of `seriesPerMetric` attribute sets each (host h<j>, one region; the resource's
 * service.name makes the third tag), every value 1: captured from the exporter itself by a listener on
 * 127.0.0.1, so the bench sends exactly what the exporter does.
 */
export function otlpExportBody(metricPrefix: string, metrics: number, seriesPerMetric: number): Promise<Buffer> {
  return capturedExport({ 'service.name': 'checkout' }, (provider) => {
    const meter = provider.getMeter('bench')
    for (let k = 0; k < metrics; k++) {
      const gauge = meter.createGauge(`${metricPrefix}${k}`)
      for (let j = 0; j < seriesPerMetric; j++) gauge.record(1, { host: `h${j}`, region: 'eu-west-1' })
    }
  })
}
