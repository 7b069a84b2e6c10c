// The Prometheus HTTP API's parameters and answers that are not PromQL itself (docs/decisions.md §25): times,
// durations, match[] selectors, and the series, labels, label values and metadata look-ups over a SeriesSource.
import type { Matcher } from './ast.js'
import { PromQLError, parseDuration, parsePromQL } from './parse.js'
import type { Series, SeriesSource } from './source.js'

/** A time parameter: RFC 3339 or Unix seconds with an optional fraction; seconds. */
export function parseTime(value: string | null | undefined, name: string, fallback?: number): number {
  if (value === null || value === undefined || value === '') {
    if (fallback !== undefined) return fallback
    throw new PromQLError(`invalid parameter "${name}": missing`)
  }
  if (/^[+-]?\d+(\.\d+)?$/.test(value)) return Number(value)
  const ms = Date.parse(value)
  if (/^\d{4}-\d\d-\d\dT/.test(value) && Number.isFinite(ms)) return ms / 1000
  throw new PromQLError(`invalid parameter "${name}": cannot parse "${value}" to a valid timestamp`)
}

/** The step: float seconds or a duration. */
export function parseStep(value: string | null | undefined): number {
  if (!value) throw new PromQLError('invalid parameter "step": missing')
  if (/^\d+(\.\d+)?$/.test(value)) {
    const s = Number(value)
    if (s > 0) return s
  }
  const d = parseDuration(value)
  if (d !== null && d > 0) return d
  throw new PromQLError('invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer')
}

/** A match[] selector's matchers. */
export function matchersOf(selector: string): Matcher[] {
  const expr = parsePromQL(selector)
  if (expr.type !== 'selector') throw new PromQLError(`invalid parameter "match[]": ${JSON.stringify(selector)} is not a series selector`)
  return expr.matchers
}

/**
 * A label name as Prometheus 3 may send it in a URL path: `U__` then the name with `_` as `__` and any other
 * character outside [A-Za-z0-9] as `_<hex code point>_` (model.UnescapeName, the "values" escaping scheme).
 */
export function unescapeLabelName(name: string): string {
  if (!name.startsWith('U__')) return name
  return name
    .slice(3)
    .replace(/__|_([0-9a-fA-F]+)_/g, (m, hex: string | undefined) => (m === '__' ? '_' : String.fromCodePoint(Number.parseInt(hex!, 16))))
}

/** The series matching any of the selectors (all series with none), each once. */
export async function seriesMatching(
  source: SeriesSource,
  accountId: string,
  selectors: string[],
  start?: number,
  end?: number,
): Promise<Series[]> {
  const lists = selectors.length
    ? await Promise.all(selectors.map((s) => source.selectSeries(accountId, matchersOf(s), start, end)))
    : [await source.selectSeries(accountId, [], start, end)]
  const byId = new Map<string, Series>()
  for (const list of lists) for (const s of list) byId.set(s.id, s)
  return [...byId.values()]
}

export function labelNames(series: Series[]): string[] {
  return [...new Set(series.flatMap((s) => Object.keys(s.labels)))].sort()
}

export function labelValues(series: Series[], name: string): string[] {
  return [...new Set(series.map((s) => s.labels[name]).filter((v): v is string => v !== undefined && v !== ''))].sort()
}

/** /api/v1/metadata's answer: per metric name, its type, help and unit. */
export function metadataOf(series: Series[], limit: number | null): Record<string, Array<{ type: string; help: string; unit: string }>> {
  const out: Record<string, Array<{ type: string; help: string; unit: string }>> = {}
  for (const s of [...series].sort((a, b) => a.labels.__name__.localeCompare(b.labels.__name__))) {
    const name = s.labels.__name__
    if (out[name]) continue
    if (limit !== null && limit >= 0 && Object.keys(out).length >= limit) break
    out[name] = [{ type: s.kind, help: s.help ?? '', unit: s.unit ?? '' }]
  }
  return out
}
