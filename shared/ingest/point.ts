// Turns the fields of one write (any route) into a validated point, or a
// 400 with the interface's message. Every write path calls this.
import { invalid } from '../errors.js'
import type { Kind } from '../stats/repo.js'
import { parseStatName } from './names.js'
import { isAbsent, parseNumber } from './numbers.js'
import type { Parsed } from './parsed.js'
import { pointTags, type Tags } from './tags.js'
import { unprintableText } from './text.js'
import { isBlank, parseTimestamp } from './timestamps.js'

export interface ValidPoint {
  name: string
  kind: Kind
  value: number
  /** Explicit timestamp; undefined means server receive time. */
  t: number | undefined
  ikey: string | undefined
  /** The series' tag set (docs/decisions.md §24); absent: the stat's untagged series. */
  tags?: Tags
  /** seriesKey(name, tags), set with tags: the key of the point's series among a request's points. */
  series?: string
}

/** The key of a point's series (its stat name when untagged). */
export const seriesOf = (p: ValidPoint): string => p.series ?? p.name

export interface RawPoint {
  stat?: unknown
  count?: unknown
  value?: unknown
  t?: unknown
  ikey?: unknown
  /** v1 writes only: legacy routes never pass it, so they carry no tags. */
  tags?: unknown
}

export const MAX_IKEY_LENGTH = 128

function unwrap<T>(p: Parsed<T>, prefix: string): T {
  if (p.ok) return p.value
  throw invalid(p.code, prefix + p.message)
}

export interface PointRules {
  /** The kind the route writes (/c and count routes: counter; /v and value routes: gauge); unset on /ez, where the field sent decides. */
  kind?: Kind
  /** Legacy rule: a missing count records 1. The v1 routes require the field. A missing value is always an error. */
  countDefaultsToOne: boolean
}

export function validatePoint(raw: RawPoint, rules: PointRules, nowSeconds: number, prefix = ''): ValidPoint {
  const fixed = rules.kind
  const name = unwrap(parseStatName(raw.stat), prefix)
  let kind: Kind
  if (fixed) kind = fixed
  else if (!isAbsent(raw.count) && !isAbsent(raw.value)) throw invalid('count_and_value', `${prefix}send either count or value, not both`)
  else kind = isAbsent(raw.value) ? 'counter' : 'gauge'
  const field = kind === 'counter' ? 'count' : 'value'
  const input = kind === 'counter' ? raw.count : raw.value
  const value = kind === 'counter' && isAbsent(input) && rules.countDefaultsToOne ? 1 : unwrap(parseNumber(input, field), prefix)
  const t = isBlank(raw.t) ? undefined : unwrap(parseTimestamp(raw.t, nowSeconds), prefix)
  let ikey: string | undefined
  if (typeof raw.ikey === 'string' && raw.ikey !== '') {
    if (raw.ikey.length > MAX_IKEY_LENGTH) throw invalid('invalid_ikey', `${prefix}invalid ikey: longer than ${MAX_IKEY_LENGTH} characters`)
    // Checked here too (not only where requests enter): every write path, present and future, calls this.
    const why = unprintableText(raw.ikey)
    if (why) throw invalid('invalid_ikey', `${prefix}invalid ikey: ${why}`)
    ikey = raw.ikey
  } else if (raw.ikey !== undefined && raw.ikey !== null && raw.ikey !== '') {
    throw invalid('invalid_ikey', `${prefix}invalid ikey: must be a string`)
  }
  // Dedup keys on stat + t + ikey with an explicit t only: without t every attempt gets its own arrival
  // time, so a retry double-counts (docs/decisions.md §I-4.1.4), even within the same second.
  const point: ValidPoint = { name, kind, value: value === 0 ? 0 : value, t, ikey: t === undefined ? undefined : ikey }
  if (raw.tags === undefined) return point
  const tagged = unwrap(pointTags(name, raw.tags), prefix)
  if (tagged) {
    point.tags = tagged.tags
    point.series = tagged.series
  }
  return point
}
