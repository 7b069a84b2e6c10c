// InfluxDB line protocol (docs/decisions.md §21): `measurement[,tag=v...] field=v[,field=v...] [timestamp]`, one
// point per line. Each field becomes the gauge `<measurement>.<field>` (the field `value` maps to
// `<measurement>`), its tags the series' tags (docs/decisions.md §24, stat-name.ts); timestamps are truncated to seconds, none means the receive
// time. Every number rule of docs/decisions.md §I-2.2 applies to field values, so string and boolean fields are refused
// like any other non-number. The first bad line refuses the whole request, named by its number.
import { invalid } from '../../errors.js'
import { parseNumber } from '../numbers.js'
import { reject } from '../parsed.js'
import type { ValidPoint } from '../point.js'
import { parseTimestamp } from '../timestamps.js'
import { protocolSeries } from './stat-name.js'
import { CHUNK, tooManyPoints, yieldToEventLoop } from './admit.js'

/** Units of a timestamp as InfluxDB's `precision` names them (2.x spellings, and 1.x's n, u, m, h). */
const PRECISION_DIGITS: Record<string, number> = { ns: 9, n: 9, us: 6, u: 6, µ: 6, ms: 3, s: 0 }
const PRECISION_UNITS: Record<string, number> = { m: 60, h: 3600 }

export type Precision = { digits: number; multiplier: number }

/** The precision query parameter; unset is nanoseconds, as InfluxDB reads it. */
export function parsePrecision(raw: unknown): Precision {
  if (raw === undefined || raw === '') return { digits: 9, multiplier: 1 }
  if (typeof raw === 'string' && Object.hasOwn(PRECISION_DIGITS, raw)) return { digits: PRECISION_DIGITS[raw], multiplier: 1 }
  if (typeof raw === 'string' && Object.hasOwn(PRECISION_UNITS, raw)) return { digits: 0, multiplier: PRECISION_UNITS[raw] }
  throw invalid('invalid_precision', `invalid precision: ${JSON.stringify(String(raw))}; use ns, us, ms or s`)
}

export interface ParsedLines {
  points: ValidPoint[]
  /** The 1-based line number each point came from. */
  lineOf: number[]
}

/** Thrown text for line `n`: InfluxDB names the line too (`unable to parse '...': reason`). */
export function lineError(text: string, n: number, reason: string, code = 'invalid_line'): Error {
  const shown = text.length > 100 ? `${text.slice(0, 100)}...` : text
  return invalid(code, `line ${n}: ${reason} (unable to parse '${shown}')`, { line: n })
}

/**
 * Lines of a body that can hold a point (not blank, not a comment): the fewest points it can make, counted on
 * the bytes without building a string or a point, so a body can be refused by its size in points before it is
 * parsed. Yields to the event loop every megabyte.
 */
export async function countPointLines(body: Uint8Array): Promise<number> {
  const SPACE = 0x20,
    TAB = 0x09,
    NL = 0x0a,
    CR = 0x0d,
    HASH = 0x23
  let lines = 0
  let atStart = true
  for (let from = 0; from < body.length; from += 1 << 20) {
    if (from) await yieldToEventLoop()
    const to = Math.min(body.length, from + (1 << 20))
    for (let i = from; i < to; i++) {
      const c = body[i]
      if (c === NL) atStart = true
      else if (atStart && c !== SPACE && c !== TAB && c !== CR) {
        atStart = false
        if (c !== HASH) lines++
      }
    }
  }
  return lines
}

/**
 * Reads a line-protocol body into validated gauge points; throws on the first bad line, and with a 413 once
 * the points pass `maxPoints` (a line holds several). Parses CHUNK lines at a time, yielding to the event loop
 * between them, so a large body does not hold up other requests.
 */
export async function parseLineProtocol(
  body: string,
  precision: Precision,
  nowSeconds: number,
  maxPoints = Infinity,
): Promise<ParsedLines> {
  const points: ValidPoint[] = []
  const lineOf: number[] = []
  // A body repeats its series (Telegraf sends each host's series every interval, in batches of thousands):
  // each distinct series and field is named once per request.
  const names = new Map<string, ReturnType<typeof protocolSeries>>()
  let n = 0
  for (let at = 0; at <= body.length; ) {
    const nl = body.indexOf('\n', at)
    const end = nl === -1 ? body.length : nl
    let line = body.slice(at, end)
    at = end + 1
    n++
    if (n % CHUNK === 0) await yieldToEventLoop()
    if (line.endsWith('\r')) line = line.slice(0, -1)
    const start = firstNonSpace(line)
    if (start === line.length || line[start] === '#') continue
    const lineNo = n
    const fail = (reason: string, code?: string) => lineError(line, lineNo, reason, code)
    const parsed = parseSimpleLine(line, start) ?? parseLine(line, start, fail)
    let t: number | undefined
    if (parsed.timestamp !== undefined) {
      const seconds = toSeconds(parsed.timestamp, precision)
      if (seconds === undefined) throw fail(`invalid timestamp ${JSON.stringify(parsed.timestamp)}: not an integer`)
      const checked = parseTimestamp(seconds, nowSeconds)
      if (!checked.ok) throw fail(checked.message, checked.code)
      t = checked.value
    }
    for (const [field, raw] of parsed.fields) {
      const value = fieldNumber(raw)
      if (!value.ok) throw fail(`field "${field}": ${value.message}`, value.code)
      const memo = `${parsed.series}\u0000${field}`
      let name = names.get(memo)
      if (!name)
        names.set(memo, (name = protocolSeries(field === 'value' ? parsed.measurement : `${parsed.measurement}.${field}`, parsed.tags)))
      if (!name.ok) throw fail(name.message, name.code)
      if (points.length >= maxPoints) throw tooManyPoints(undefined, 'points')
      points.push({ ...name.value, kind: 'gauge', value: value.value, t, ikey: undefined })
      lineOf.push(lineNo)
    }
  }
  return { points, lineOf }
}

function firstNonSpace(s: string): number {
  let i = 0
  while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++
  return i
}

interface Line {
  /** The line's text up to its fields (measurement and tags as sent): the key of the name memo. */
  series: string
  measurement: string
  tags: Array<[string, string]>
  fields: Array<[string, string]>
  timestamp: string | undefined
}

/**
 * Splits one line by the protocol's escaping rules: `\` escapes comma and space in the measurement, and
 * comma, `=` and space in tag keys, tag values and field keys; string field values are double-quoted with
 * `\"` and `\\` escaped. A backslash before anything else is itself.
 */
function parseLine(line: string, start: number, fail: (reason: string) => Error): Line {
  let i = start
  const read = (stops: string): string => {
    let out = ''
    while (i < line.length) {
      const c = line[i]
      if (c === '\\' && i + 1 < line.length && (stops.includes(line[i + 1]) || line[i + 1] === '\\')) {
        out += line[i + 1]
        i += 2
        continue
      }
      if (stops.includes(c)) break
      out += c
      i++
    }
    return out
  }
  const measurement = read(', ')
  if (!measurement) throw fail('missing measurement')
  const tags: Array<[string, string]> = []
  while (line[i] === ',') {
    i++
    const key = read(',= ')
    if (line[i] !== '=') throw fail(`tag "${key}": missing "="`)
    i++
    const value = read(',= ')
    if (!key) throw fail('empty tag key')
    if (!value) throw fail(`tag "${key}": empty value`)
    tags.push([key, value])
  }
  const seriesEnd = i
  if (line[i] !== ' ') throw fail('missing fields')
  while (line[i] === ' ') i++
  const fields: Array<[string, string]> = []
  for (;;) {
    const key = read(',= ')
    if (!key) throw fail('missing field key')
    if (line[i] !== '=') throw fail(`field "${key}": missing "="`)
    i++
    let value: string
    if (line[i] === '"') {
      const from = i
      i++
      while (i < line.length && line[i] !== '"') i += line[i] === '\\' ? 2 : 1
      if (i >= line.length) throw fail(`field "${key}": unterminated string`)
      i++
      value = line.slice(from, i)
    } else {
      const from = i
      while (i < line.length && line[i] !== ',' && line[i] !== ' ') i++
      value = line.slice(from, i)
    }
    if (!value) throw fail(`field "${key}": missing value`)
    fields.push([key, value])
    if (line[i] !== ',') break
    i++
  }
  while (line[i] === ' ') i++
  let timestamp: string | undefined
  if (i < line.length) {
    const end = line.indexOf(' ', i)
    timestamp = end === -1 ? line.slice(i) : line.slice(i, end)
    if (end !== -1 && line.slice(end).trim() !== '') throw fail('unexpected text after the timestamp')
  }
  return { series: line.slice(start, seriesEnd), measurement, tags, fields, timestamp }
}

/**
 * The common line, split without the escaping rules: no backslash, no quote, single spaces between
 * series, fields and timestamp. undefined sends the line to parseLine, which reads every form and says
 * what is wrong with a bad one.
 */
function parseSimpleLine(line: string, start: number): Line | undefined {
  if (line.includes('\\') || line.includes('"')) return undefined
  const parts = (start ? line.slice(start) : line).split(' ')
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) return undefined
  const [series, fieldText, timestamp] = parts
  const seriesParts = series.split(',')
  const measurement = seriesParts[0]
  if (!measurement) return undefined
  const tags: Array<[string, string]> = []
  for (let i = 1; i < seriesParts.length; i++) {
    const eq = seriesParts[i].indexOf('=')
    if (eq <= 0 || eq === seriesParts[i].length - 1 || seriesParts[i].indexOf('=', eq + 1) !== -1) return undefined
    tags.push([seriesParts[i].slice(0, eq), seriesParts[i].slice(eq + 1)])
  }
  const fields: Array<[string, string]> = []
  for (const f of fieldText.split(',')) {
    const eq = f.indexOf('=')
    if (eq <= 0 || eq === f.length - 1 || f.indexOf('=', eq + 1) !== -1) return undefined
    fields.push([f.slice(0, eq), f.slice(eq + 1)])
  }
  return { series, measurement, tags, fields, timestamp }
}

const INTEGER = /^-?[0-9]+$/

/** A field value as a number by docs/decisions.md §I-2.2: floats, `12i` integers and `12u` unsigned; strings and booleans are not numbers. */
function fieldNumber(raw: string) {
  const last = raw[raw.length - 1]
  if ((last === 'i' || last === 'u') && INTEGER.test(raw.slice(0, -1))) {
    // InfluxDB refuses the line too ("invalid unsigned number"): a `u` field is never negative, not even -0u.
    if (last === 'u' && raw[0] === '-') return reject('invalid_value', `invalid value "${raw}": an unsigned integer (u) is never negative`)
    return parseNumber(raw.slice(0, -1), 'value')
  }
  // A quoted string is text even when it spells a number: InfluxDB stores it as a string field.
  if (raw[0] === '"') return reject('invalid_value', 'invalid value: not a number (a string field)')
  return parseNumber(raw, 'value')
}

/** Whole seconds of an integer timestamp in `precision`, truncated (exact for nanoseconds past 2^53); undefined when not an integer. */
function toSeconds(text: string, precision: Precision): number | undefined {
  if (!INTEGER.test(text)) return undefined
  if (precision.digits === 0) return Number(text) * precision.multiplier
  // Non-negative: truncating is dropping the last digits (no BigInt for the common timestamp).
  if (text[0] !== '-') return text.length <= precision.digits ? 0 : Number(text.slice(0, text.length - precision.digits))
  // Integer division in decimal digits: BigInt is exact where a double would round a nanosecond timestamp.
  return Number(BigInt(text) / 10n ** BigInt(precision.digits))
}
