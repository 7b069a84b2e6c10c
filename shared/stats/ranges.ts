// Chart ranges and their bucket sizes (docs/decisions.md §6).
import { invalid } from '../errors.js'

export const RANGES = {
  '1h': { seconds: 3_600, bucket: 60 },
  '6h': { seconds: 21_600, bucket: 300 },
  '24h': { seconds: 86_400, bucket: 900 },
  '7d': { seconds: 604_800, bucket: 3_600 },
  '30d': { seconds: 2_592_000, bucket: 21_600 },
  '90d': { seconds: 7_776_000, bucket: 86_400 },
  '180d': { seconds: 15_552_000, bucket: 86_400 },
} as const
export type RangeName = keyof typeof RANGES
export const RANGE_NAMES = Object.keys(RANGES) as RangeName[]

export interface Window {
  requested: string
  from: Date
  to: Date
  bucketSeconds: number
  /** Set once the window was clamped to the account's plan retention (see clampToRetention). */
  retentionDays?: number
  clampedByRetention?: boolean
}

/** The bucket size for a custom window: the smallest range's bucket whose span covers it. */
function bucketFor(spanSeconds: number): number {
  for (const r of Object.values(RANGES)) if (spanSeconds <= r.seconds) return r.bucket
  return 86_400
}

const alignDown = (seconds: number, bucket: number) => Math.floor(seconds / bucket) * bucket

// Bounds of a from/to date: no point predates 2000 (docs/decisions.md §I-8), and outside them the window's
// arithmetic reaches dates PostgreSQL refuses (year 0 and before), which was a 500.
const MIN_DATE = Date.UTC(1970, 0, 1)
const MAX_DATE = Date.UTC(9999, 11, 31, 23, 59, 59)

/** A from/to query value as a date, or a 400 naming the field (every read route parses them here). */
export function parseIso(value: string, field: string): Date {
  const d = new Date(value)
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime()))
    throw invalid('invalid_date', `invalid ${field}: expected an ISO 8601 date or date-time`)
  if (d.getTime() < MIN_DATE || d.getTime() > MAX_DATE)
    throw invalid('invalid_date', `invalid ${field}: must be between 1970-01-01 and 9999-12-31`)
  return d
}

/** Resolves `range` or `from`/`to` into a window aligned to its buckets (UTC). */
export function resolveWindow(
  q: { range?: string; from?: string; to?: string },
  now: Date,
  allowed: readonly string[] = RANGE_NAMES,
  fallback: RangeName = '24h',
): Window {
  const nowS = Math.floor(now.getTime() / 1000)
  if (q.range !== undefined && (q.from !== undefined || q.to !== undefined))
    throw invalid('range_with_from_to', 'range cannot be combined with from or to')
  if (q.from !== undefined || q.to !== undefined) {
    const to = q.to !== undefined ? parseIso(q.to, 'to') : now
    const from = q.from !== undefined ? parseIso(q.from, 'from') : new Date(to.getTime() - 86_400_000)
    if (from >= to) throw invalid('invalid_window', 'from must be before to')
    const bucket = bucketFor((to.getTime() - from.getTime()) / 1000)
    return { requested: 'custom', from: new Date(alignDown(from.getTime() / 1000, bucket) * 1000), to, bucketSeconds: bucket }
  }
  const name = q.range ?? fallback
  if (!allowed.includes(name)) throw invalid('invalid_range', `invalid range: must be one of ${allowed.join(', ')}`)
  const r = RANGES[name as RangeName]
  return { requested: name, from: new Date(alignDown(nowS - r.seconds, r.bucket) * 1000), to: now, bucketSeconds: r.bucket }
}

/**
 * Clamps a window to the plan's retention, as export does: nothing older than `retentionDays` is read,
 * even before the retention job has deleted it, so every read shows the same history. The start moves up
 * to the first whole bucket inside retention; a window wholly before it becomes empty.
 */
export function clampToRetention(w: Window, retentionDays: number, now: Date): Window {
  const start = Math.ceil((now.getTime() / 1000 - retentionDays * 86_400) / w.bucketSeconds) * w.bucketSeconds * 1000
  const clamped = w.from.getTime() < start
  const from = clamped ? new Date(Math.min(start, w.to.getTime())) : w.from
  return { ...w, from, retentionDays, clampedByRetention: clamped }
}

/** The `range` object of read responses. */
export function windowJson(w: Window) {
  return {
    requested_range: w.requested,
    from: w.from.toISOString(),
    to: w.to.toISOString(),
    bucket_seconds: w.bucketSeconds,
    ...(w.retentionDays !== undefined
      ? { retention_days: w.retentionDays, range_clamped_by_retention: Boolean(w.clampedByRetention) }
      : {}),
  }
}
