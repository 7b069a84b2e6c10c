// The file formats an import accepts (docs/decisions.md §9), detected from
// the content: JSON (the predecessor's export API, wrapped with a statlist or
// not, its command-line tool's capitalised keys, and this service's export)
// or CSV (long: stat,value,timestamp|time[,kind]; wide: Time,<stat>,<stat>...).
// Each reader feeds Rows; a file that is none of these is a 400 saying what was expected.
import { parse as parseCsv } from 'csv-parse/sync'
import { AppError, invalid } from '../errors.js'
import { parseStatName } from '../ingest/names.js'
import { unprintableText } from '../ingest/text.js'
import { linesOfPaths } from './json-lines.js'
import { kindFromText, Rows, type Where } from './rows.js'

export type ImportFormat = 'predecessor_json' | 'service_json' | 'long_csv' | 'wide_csv'

export const EXPECTED =
  "expected the predecessor's export JSON (an array of {name, timeframe, points: [{time, value}]}, optionally " +
  "wrapped as {statlist, datasets}), this service's export JSON or CSV, a long CSV with a header holding stat, value and " +
  'timestamp (or time), or a wide CSV whose header is Time,<stat>,<stat>...'

const unrecognised = (what: string) => invalid('import_unrecognised', `unrecognised file: ${what}; ${EXPECTED}`)

export interface ReadFile {
  format: ImportFormat
  rows: Rows
  /** The lines of places in the file (JSON paths are found by scanning the text once per call). */
  place(wheres: Where[]): number[]
}

/** Reads a whole upload into rows. Throws a 400 for an empty, unreadable or unrecognised file, or one over the point limit. */
export function readImportFile(buf: Buffer, nowSeconds: number): ReadFile {
  // A UTF-8 byte order mark is not content (spreadsheets write one).
  const text = buf.toString('utf8').replace(/^\uFEFF/, '')
  const first = /\S/.exec(text)
  if (!first) throw invalid('import_empty', `the file is empty; ${EXPECTED}`)
  const rows = new Rows(nowSeconds)
  if (first[0] !== '[' && first[0] !== '{') {
    const format = readCsv(text, rows)
    refuseBadTags(rows, (wheres) => wheres as number[])
    return { format, rows, place: (wheres) => wheres as number[] }
  }
  const format = readJson(text, rows)
  const place = (wheres: Where[]) => {
    if (!wheres.length) return []
    const lines = linesOfPaths(text, wheres as Array<Array<string | number>>)
    return wheres.map((w) => lines.get((w as Array<string | number>).join('\u0000')) ?? 0)
  }
  refuseBadTags(rows, place)
  // Bad points get the line their value starts on.
  const bad = [...rows.errors, ...rows.badValues]
  place(bad.map((e) => e.where)).forEach((line, i) => {
    bad[i].where = line
  })
  return { format, rows, place }
}

/**
 * A bad tag set refuses the whole file, naming its line: its points cannot go to the untagged series
 * (an export re-imported must land in the series it came from, docs/decisions.md §24), and skipping them
 * would leave a series half restored.
 */
function refuseBadTags(rows: Rows, place: (wheres: Where[]) => number[]): void {
  const bad = rows.tagErrors[0]
  if (!bad) return
  const [line] = place([bad.where])
  const more = rows.tagErrors.length - 1
  throw invalid(
    'import_invalid_tags',
    `line ${line}: ${bad.message}${more ? ` (and ${more} more line${more === 1 ? '' : 's'} with bad tags)` : ''}; nothing was imported`,
  )
}

/** A field by its name in any of the spellings the formats use (`name`, `Name`). */
function field(o: Record<string, unknown>, name: string): [key: string, value: unknown] {
  if (name in o) return [name, o[name]]
  const cap = name[0].toUpperCase() + name.slice(1)
  return [cap, o[cap]]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function readJson(text: string, rows: Rows): ImportFormat {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    const m = /position (\d+)/.exec((err as Error).message)
    const line = m ? text.slice(0, Number(m[1])).split('\n').length : undefined
    throw invalid('import_invalid_json', `invalid JSON${line ? ` at line ${line}` : ''}: ${(err as Error).message}`)
  }
  // This service's export: {requested_range, ..., stats: [{name, kind, points: [{t, value}]}]}.
  if (isObject(doc) && Array.isArray(doc.stats) && !('datasets' in doc)) {
    readDatasets(doc.stats, ['stats'], new Map(), rows)
    return 'service_json'
  }
  // The predecessor's export API, optionally wrapped with the statlist that says which stats are counters.
  let datasets: unknown = doc
  let path: Array<string | number> = []
  const kinds = new Map<string, unknown>()
  if (isObject(doc)) {
    const [dkey, ds] = field(doc, 'datasets')
    if (!Array.isArray(ds)) throw unrecognised('a JSON object without a "datasets" or "stats" array')
    datasets = ds
    path = [dkey]
    const [, list] = field(doc, 'statlist')
    if (Array.isArray(list)) {
      for (const s of list) {
        if (!isObject(s) || typeof field(s, 'name')[1] !== 'string') continue
        const name = field(s, 'name')[1] as string
        kinds.set(name, field(s, 'counter')[1])
        // Its unit ("smoots"), when it is one a stat can carry (1 to 20 printable characters); else it is left out.
        const unit = field(s, 'unit')[1]
        if (typeof unit === 'string' && unit.trim().length >= 1 && unit.trim().length <= 20 && !unprintableText(unit)) {
          const parsed = parseStatName(name)
          if (parsed.ok) rows.units.set(parsed.value, unit.trim())
        }
      }
    }
  }
  const items = datasets as unknown[]
  if (!items.every((d) => isObject(d) && Array.isArray(field(d, 'points')[1]))) {
    const looksLikeStatlist = items.length > 0 && items.every((d) => isObject(d) && 'counter' in d)
    throw unrecognised(
      looksLikeStatlist
        ? 'this is a stat list, which holds no data points (export the datasets, or send {"statlist": [...], "datasets": [...]})'
        : 'a JSON array whose items are not datasets with "name" and "points"',
    )
  }
  readDatasets(items, path, kinds, rows)
  return 'predecessor_json'
}

/** Datasets `[{name, kind?, points: [{time|t, value}]}]`; `statlist` kinds by name (counter: true/false). */
function readDatasets(items: unknown[], base: Array<string | number>, statlist: Map<string, unknown>, rows: Rows): void {
  items.forEach((d, i) => {
    const where = [...base, i]
    if (!isObject(d)) throw unrecognised(`item ${i} of "${base.join('.') || 'the array'}" is not an object`)
    const [pkey, points] = field(d, 'points')
    if (!Array.isArray(points)) {
      rows.error(where, 'not a dataset: expected {"name", "points": [...]}')
      return
    }
    const list = points
    rows.count(list.length)
    const [, name] = field(d, 'name')
    let kind = kindFromText(field(d, 'kind')[1])
    if (kind === undefined && typeof name === 'string' && statlist.has(name)) kind = statlist.get(name) === true ? 'counter' : 'gauge'
    if (kind === null) {
      rows.error(where, `invalid kind ${JSON.stringify(field(d, 'kind')[1])}: must be counter or gauge (or the predecessor's "value")`)
      rows.pointsInvalid += list.length
      return
    }
    const ix = rows.statOf(name, kind, where)
    if (typeof ix === 'string') {
      rows.error(where, ix, typeof name === 'string' ? name : undefined)
      rows.pointsInvalid += list.length
      return
    }
    list.forEach((p, j) => {
      const at: Where = [...where, pkey, j]
      if (!isObject(p)) {
        rows.error(at, 'not a point: expected {"time": <unix seconds>, "value": <number>}', rows.stats[ix].name)
        rows.pointsInvalid++
        return
      }
      const t = 't' in p ? p.t : field(p, 'time')[1]
      // This service's export gives each point of a tagged series its tags (shared/export/stream.ts).
      let six = ix
      if (p.tags !== undefined) {
        const tags = rows.tagsOf(p.tags, [...at, 'tags'])
        if (tags === null) return
        if (tags) {
          const tix = rows.statOf(name, kind, at, tags)
          if (typeof tix === 'string') {
            rows.error(at, tix, rows.stats[ix].name)
            rows.pointsInvalid++
            return
          }
          six = tix
        }
      }
      rows.point(six, t, field(p, 'value')[1], at)
    })
  })
}

function readCsv(text: string, rows: Rows): ImportFormat {
  let header: string[] | undefined
  let reader: ((record: string[], line: number) => void) | undefined
  let format: ImportFormat = 'long_csv'
  try {
    // Records are handled as they are parsed and dropped (on_record returns null): memory holds the rows, not the records.
    parseCsv(text, {
      bom: true,
      comment: '#',
      comment_no_infix: true,
      skip_empty_lines: true,
      relax_column_count: true,
      on_record: (record: string[], ctx: { lines: number }) => {
        if (!header) {
          header = record.map((h) => h.trim().toLowerCase())
          ;[format, reader] = csvReader(header, record, rows)
        } else reader!(record, ctx.lines)
        return null
      },
    })
  } catch (err) {
    if (err instanceof AppError) throw err
    const e = err as Error & { lines?: number }
    throw invalid('import_invalid_csv', `CSV could not be read${e.lines ? ` at line ${e.lines}` : ''}: ${e.message}`)
  }
  if (!header) throw invalid('import_empty', `the file is empty; ${EXPECTED}`)
  return format
}

/** Picks long or wide from the header; the header's own bad names are errors on line 1. */
function csvReader(header: string[], raw: string[], rows: Rows): [ImportFormat, (record: string[], line: number) => void] {
  const col = (n: string) => header.indexOf(n)
  const [stat, value, kind, tagsCol] = [col('stat'), col('value'), col('kind'), col('tags')]
  const time = col('timestamp') >= 0 ? col('timestamp') : col('time')
  if (stat >= 0 && value >= 0 && time >= 0) {
    const needed = Math.max(stat, value, time) + 1
    return [
      'long_csv',
      (r, line) => {
        rows.count(1)
        if (r.length < needed) {
          rows.error(line, `line has ${r.length} field${r.length === 1 ? '' : 's'}; the header has ${header.length}`)
          rows.pointsInvalid++
          return
        }
        const k = kind >= 0 && kind < r.length ? kindFromText(r[kind]) : undefined
        if (k === null) {
          rows.error(line, `invalid kind "${r[kind]}": must be counter or gauge`)
          rows.pointsInvalid++
          return
        }
        // The export's tags column (`k=v;k=v`) names the series; empty: the stat's untagged series.
        const tags = tagsCol >= 0 && tagsCol < r.length ? rows.tagsOf(r[tagsCol], line) : undefined
        if (tags === null) return
        const ix = rows.statOf(r[stat], k, line, tags)
        if (typeof ix === 'string') {
          rows.error(line, ix)
          rows.pointsInvalid++
          return
        }
        rows.point(ix, r[time], r[value], line)
      },
    ]
  }
  if (header[0] === 'time' && header.length > 1) {
    const stats = raw.slice(1).map((name) => {
      const ix = rows.statOf(name, undefined, 1)
      if (typeof ix === 'string') rows.error(1, `column "${name}": ${ix}`)
      return ix
    })
    return [
      'wide_csv',
      (r, line) => {
        const cells: number[] = []
        for (let j = 1; j < r.length && j <= stats.length; j++) if (r[j].trim() !== '') cells.push(j)
        rows.count(cells.length)
        const t = rows.timestamp(r[0])
        if (typeof t === 'string') {
          if (cells.length) rows.error(line, t)
          rows.pointsInvalid += cells.length
          return
        }
        for (const j of cells) {
          const ix = stats[j - 1]
          if (typeof ix === 'string') rows.pointsInvalid++
          else rows.point(ix, t, r[j], line)
        }
      },
    ]
  }
  throw unrecognised(
    `the CSV header "${raw.join(',').slice(0, 200)}" has neither stat, value and timestamp (or time) columns nor Time first`,
  )
}
