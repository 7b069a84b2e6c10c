// The rows of an import file, whatever its format: every name, value and
// timestamp goes through the ingest rules (shared/ingest), with the same
// messages, and every bad line is kept with its number. Formats (formats.ts)
// feed this collector one point at a time; nothing here knows about files.
import { invalid } from '../errors.js'
import { parseStatName } from '../ingest/names.js'
import { parseNumber } from '../ingest/numbers.js'
import { printable } from '../ingest/text.js'
import { parseTags, parseTagsCell, seriesKey, type Tags } from '../ingest/tags.js'
import { MIN_TIMESTAMP, parseTimestamp } from '../ingest/timestamps.js'
import type { Kind } from '../stats/repo.js'

/** docs/decisions.md §I-8: at most 8 MB and 500,000 points per file. */
export const MAX_IMPORT_BYTES = 8_000_000
export const MAX_IMPORT_POINTS = 500_000

/** Where a bad row is: a file line (CSV), or a JSON path whose line is found afterwards (json-lines.ts). */
export type Where = number | Array<string | number>

export interface LineError {
  line: number
  message: string
  stat?: string
}

/** One series of the file (docs/decisions.md §24): a stat name and its tag set (none: the stat's untagged series). */
export interface FileStat {
  name: string
  tags?: Tags
  /** The kind the file states (a kind column, a statlist, a dataset's Kind); undefined when it does not say. */
  fileKind: Kind | undefined
  where: Where
}

/** A value that failed the number rules; its message names `count` or `value`, which needs the stat's final kind. */
interface BadValue {
  where: Where
  stat: number
  raw: unknown
}

// ISO 8601 date, date-time with optional seconds and fraction, zone Z or ±hh[:]mm. Without a zone: UTC.
const ISO = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i
// Go's time.Stamp, as the predecessor's command-line tool wrote its CSV: "Jan _2 15:04:05", no year.
const GO_STAMP = /^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?$/

/** Kind words as files spell them: ours (counter, gauge) and the predecessor's (counter, value). */
export function kindFromText(text: unknown): Kind | undefined | null {
  if (text === undefined || text === null || (typeof text === 'string' && text.trim() === '')) return undefined
  if (typeof text !== 'string') return null
  const k = text.trim().toLowerCase()
  return k === 'counter' ? 'counter' : k === 'gauge' || k === 'value' ? 'gauge' : null
}

export class Rows {
  readonly stats: FileStat[] = []
  /** Units the file states by stat name (the predecessor's statlist `unit`), given to stats that have none. */
  readonly units = new Map<string, string>()
  private readonly statIx = new Map<string, number>()
  private readonly names = new Map<string, number | string>()
  /** Valid points, columnar, in file order. */
  readonly stat: number[] = []
  readonly t: number[] = []
  readonly value: number[] = []
  /** How many earlier valid points of the file have the same stat, second and value (the import's idempotency key). */
  readonly occ: number[] = []
  // For the occurrence count: each stat's newest second and rows so far, and, once a stat's points stop
  // coming in time order (or repeat a second), an index of its rows by second.
  private readonly newest: number[] = []
  private readonly rowsOf: number[][] = []
  private readonly bySecond = new Map<number, Map<number, number[]>>()
  readonly errors: Array<LineError & { where: Where }> = []
  /** Bad tag sets: any refuses the whole file (readImportFile), since the points would land in another series. */
  readonly tagErrors: Array<{ where: Where; message: string }> = []
  /** Each stat name's kind as the file states it, across its series. */
  private readonly nameKinds = new Map<string, Kind>()
  readonly badValues: BadValue[] = []
  pointsTotal = 0
  pointsInvalid = 0

  constructor(private readonly nowSeconds: number) {}

  /** A bad row. Messages and names quote the file, which may hold anything: they are kept printable (and storable). */
  error(where: Where, message: string, stat?: string): void {
    this.errors.push({ where, line: 0, message: printable(message), ...(stat !== undefined ? { stat: printable(stat) } : {}) })
  }

  /** Counts points as they are found: past the limit the whole file is refused, before anything else. */
  count(n: number): void {
    this.pointsTotal += n
    if (this.pointsTotal > MAX_IMPORT_POINTS) {
      throw invalid(
        'import_too_many_points',
        `file holds more than ${MAX_IMPORT_POINTS.toLocaleString('en-US')} points (the limit per import); split it into several files`,
      )
    }
  }

  /**
   * The series index of a name as the file spells it (name rules of the ingest path; `&` removed, trimmed,
   * NFC) with its tag set, or the error message. A kind stated here must agree with the one stated earlier
   * in the file for the stat (any of its series).
   */
  statOf(raw: unknown, kind: Kind | undefined, where: Where, tags?: Tags): number | string {
    const rawKey = typeof raw === 'string' ? raw : JSON.stringify(raw)
    const key = tags ? seriesKey(rawKey, tags) : rawKey
    let ix = this.names.get(key)
    if (ix === undefined) {
      const parsed = parseStatName(raw)
      if (!parsed.ok) ix = parsed.message
      else {
        const sk = seriesKey(parsed.value, tags)
        ix = this.statIx.get(sk)
        if (ix === undefined) {
          ix = this.stats.push({ name: parsed.value, ...(tags ? { tags } : {}), fileKind: undefined, where }) - 1
          this.statIx.set(sk, ix)
        }
      }
      this.names.set(key, ix)
    }
    if (typeof ix === 'number' && kind) {
      const s = this.stats[ix]
      const stated = this.nameKinds.get(s.name)
      if (!stated) this.nameKinds.set(s.name, kind)
      else if (stated !== kind) return `type conflict: stat "${s.name}" is a ${stated} earlier in this file, not a ${kind}`
      s.fileKind = kind
    }
    if (typeof ix === 'number' && !kind && !this.stats[ix].fileKind) {
      const stated = this.nameKinds.get(this.stats[ix].name)
      if (stated) this.stats[ix].fileKind = stated
    }
    return ix
  }

  /**
   * A tag set as the file gives it (a CSV `k=v;k=v` cell, or a JSON point's `tags` object), as the export
   * writes them; undefined for none. A bad one is noted (the file is refused) and null returned.
   */
  tagsOf(raw: unknown, where: Where): Tags | undefined | null {
    if (raw === undefined || raw === null || raw === '') return undefined
    const parsed = typeof raw === 'string' ? parseTagsCell(raw) : parseTags(raw)
    if (parsed.ok) return parsed.value
    this.tagErrors.push({ where, message: printable(parsed.message) })
    return null
  }

  /** One point of stat `ix` (already counted): value, then timestamp, as the ingest path checks them. */
  point(ix: number, rawT: unknown, rawValue: unknown, where: Where): void {
    const value = parseNumber(rawValue, 'value')
    if (!value.ok) {
      this.badValues.push({ where, stat: ix, raw: rawValue })
      this.pointsInvalid++
      return
    }
    const t = this.timestamp(rawT)
    if (typeof t === 'string') {
      this.error(where, t, this.stats[ix].name)
      this.pointsInvalid++
      return
    }
    this.add(ix, t, value.value)
  }

  /** A timestamp as Unix seconds or ISO 8601 (UTC when it has no zone), then the ingest window; or the message. */
  timestamp(raw: unknown): number | string {
    if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return 'invalid timestamp: missing'
    let input = raw
    if (typeof raw === 'string') {
      const text = raw.trim()
      const iso = ISO.exec(text)
      if (iso) {
        const zone = iso[3] ? iso[3].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2').toUpperCase() : 'Z'
        const ms = Date.parse(`${iso[1]}T${iso[2] ?? '00:00:00'}${zone}`)
        if (Number.isNaN(ms)) return `invalid timestamp: "${text}" is not a valid ISO 8601 time`
        input = ms / 1000
      } else if (GO_STAMP.test(text)) {
        return `invalid timestamp: "${text}" has no year (the predecessor's command-line CSV); export with --json, or write Unix seconds or ISO 8601 times`
      }
    }
    const t = parseTimestamp(input, this.nowSeconds)
    if (t.ok) return t.value
    // Say what an import takes ("not a number" read as if ISO times were refused).
    if (t.code === 'invalid_timestamp')
      return `invalid timestamp: "${String(raw).trim().slice(0, 40)}" is neither Unix seconds nor an ISO 8601 time (1700000000 or 2023-11-14T22:13:20Z)`
    return t.message
  }

  private add(ix: number, t: number, value: number): void {
    // Exports list each stat's points in time order: then a point newer than the stat's newest cannot repeat
    // an earlier one and needs no look-up. A hash of every point (500,000 keys) would cost seconds.
    const row = this.stat.length
    let n = 0
    let index = this.bySecond.get(ix)
    if (!index && !(t > (this.newest[ix] ?? -Infinity))) {
      this.bySecond.set(ix, (index = new Map()))
      for (const r of this.rowsOf[ix] ?? []) this.occurrence(index, this.t[r], this.value[r], r)
    }
    if (index) n = this.occurrence(index, t, value, row)
    if (!(t <= this.newest[ix])) this.newest[ix] = t
    ;(this.rowsOf[ix] ??= []).push(row)
    this.stat.push(ix)
    this.t.push(t)
    this.value.push(value)
    this.occ.push(n)
  }

  /** Earlier rows of the index with this second and value; notes the row. Keys offset from 2000-01-01 stay small integers (fast). */
  private occurrence(index: Map<number, number[]>, t: number, value: number, row: number): number {
    const key = t - MIN_TIMESTAMP
    let rows = index.get(key)
    if (!rows) index.set(key, (rows = []))
    let n = 0
    for (const r of rows) if (this.value[r] === value) n++
    rows.push(row)
    return n
  }

  /** The number-rule message of a bad value, naming the field of the stat's kind (`invalid count: ...`). */
  static valueMessage(raw: unknown, kind: Kind): string {
    const parsed = parseNumber(raw, kind === 'counter' ? 'count' : 'value')
    return parsed.ok ? 'invalid value' : parsed.message
  }
}
