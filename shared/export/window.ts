// The window an export covers (docs/decisions.md §I-4.5, §7): a
// named range (alias `window`), a from/to pair, or everything, always clamped
// to the plan's retention, with the clamp reported.
import { invalid } from '../errors.js'
import type { Plan } from '../plans.js'
import { parseIso, RANGE_NAMES, RANGES, type RangeName } from '../stats/ranges.js'

export interface ExportWindow {
  /** The `range` given, `custom` for from/to, `all` for neither. */
  requested: string
  from: Date
  to: Date
  retentionDays: number
  clamped: boolean
}

type QueryValue = string | string[] | undefined

function single(name: string, v: QueryValue): string | undefined {
  if (Array.isArray(v)) throw invalid('invalid_range', `invalid ${name}: given more than once; must be one of ${RANGE_NAMES.join(', ')}`)
  return v
}

/** Resolves the query; `olderDataExists` tells whether "all history" was cut by retention. */
export function resolveExportWindow(query: Record<string, QueryValue>, plan: Plan, now: Date): ExportWindow & { needsOlderCheck: boolean } {
  if (query.range !== undefined && query.window !== undefined) {
    throw invalid('invalid_range', `invalid range: range and window given together; must be one of ${RANGE_NAMES.join(', ')}`)
  }
  const rangeParam = query.range !== undefined ? 'range' : 'window'
  const range = single(rangeParam, query[rangeParam])
  const fromText = single('from', query.from)
  const toText = single('to', query.to)
  const retentionStart = new Date(now.getTime() - plan.retentionDays * 86_400_000)
  const base = { retentionDays: plan.retentionDays, to: now }

  if (range !== undefined) {
    if (fromText !== undefined || toText !== undefined) throw invalid('range_with_from_to', 'range cannot be combined with from or to')
    if (!(RANGE_NAMES as string[]).includes(range))
      throw invalid('invalid_range', `invalid ${rangeParam}: must be one of ${RANGE_NAMES.join(', ')}`)
    const from = new Date(now.getTime() - RANGES[range as RangeName].seconds * 1000)
    const clamped = from < retentionStart
    return { ...base, requested: range, from: clamped ? retentionStart : from, clamped, needsOlderCheck: false }
  }
  if (fromText !== undefined || toText !== undefined) {
    const to = toText !== undefined ? parseIso(toText, 'to') : now
    const asked = fromText !== undefined ? parseIso(fromText, 'from') : retentionStart
    if (asked >= to) throw invalid('invalid_window', 'from must be before to')
    const clamped = asked < retentionStart
    return { ...base, requested: 'custom', from: clamped ? retentionStart : asked, to, clamped, needsOlderCheck: false }
  }
  return { ...base, requested: 'all', from: retentionStart, clamped: false, needsOlderCheck: true }
}
