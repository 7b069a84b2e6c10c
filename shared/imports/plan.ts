// What an import will do with the rows of a file, decided once and used by
// both the preview and the real import, so that they cannot disagree: each
// stat's kind (the file's, else the existing stat's, else ?kind=, else gauge;
// a file kind that contradicts an existing stat is an error on its line),
// points already imported (skipped, free), and the plan's quotas: a new stat
// beyond the plan's stat limit is trimmed with all its points, an existing
// stat costs no stat quota (backfill), and points beyond what is left of the
// day's allowance are trimmed, in file order.
import { seriesKey, type Tags } from '../ingest/tags.js'
import type { Kind, Stat } from '../stats/repo.js'
import type { ImportFormat, ReadFile } from './formats.js'
import { Rows, type LineError } from './rows.js'

/** At most this many line errors are listed; errors_count has them all. */
export const MAX_LISTED_ERRORS = 1_000

export type TrimmedBy = 'stat_limit' | 'daily_limit' | 'free_tier_full'

export interface StatSummary {
  name: string
  /** The series' tags (docs/decisions.md §24); absent for a stat's untagged series. */
  tags?: Tags
  kind: Kind
  /** Valid points of the stat in the file. */
  points: number
  new_stat: boolean
  points_accepted: number
  points_trimmed: number
  points_duplicate: number
  trimmed_by: TrimmedBy | null
}

export interface ImportFacts {
  /** The account's existing stats and series among the file's, by seriesKey (a stat's own row: its name). */
  existing: Map<string, Stat>
  /** Stats the account holds now, and the plan's limit. */
  statsHeld: number
  trackedStats: number
  /** Points of today's allowance this import may use. */
  allowance: number
  /** False when a free account holds no free-tier slot and none is left: nothing can be accepted. */
  freeSlot: boolean
  /** ?kind= for new stats the file does not type. */
  defaultKind: Kind
  /** Keys of points already imported into existing stats (see duplicateKey). */
  imported: Set<string>
}

export interface ImportPlan {
  format: ImportFormat
  stats: StatSummary[]
  kinds: Kind[]
  /** Per row of `rows`: accepted (1) or not (0). */
  accepted: Uint8Array
  points_total: number
  points_accepted: number
  points_trimmed: number
  points_duplicate: number
  points_invalid: number
  errors_count: number
  errors: LineError[]
}

/**
 * The idempotency key of an imported point: the same row of any file maps to the same key, so nothing is stored twice.
 * The import job builds the same text in SQL from `${value}` and the occurrence (store.ts), and reads the value back from it.
 */
export function importIkey(value: number, occ: number): string {
  return `import:${occ}:${value}`
}

export function duplicateKey(statId: string, t: number, ikey: string): string {
  return `${statId}|${t}|${ikey}`
}

export function planImport(read: ReadFile, facts: ImportFacts): ImportPlan {
  const { format, rows } = read
  const errors: Array<LineError & { order: number }> = rows.errors.map((e, order) => ({
    line: e.where as number,
    message: e.message,
    ...(e.stat ? { stat: e.stat } : {}),
    order,
  }))
  let pointsInvalid = rows.pointsInvalid

  // Kinds, and the stats whose file kind contradicts the stored one (every point of theirs is refused).
  // Every series of a stat has the stat's kind: the stored one, else the first the file states for any of them.
  const refused = new Set<number>()
  const fileKinds = new Map<string, Kind>()
  for (const s of rows.stats) if (s.fileKind && !fileKinds.has(s.name)) fileKinds.set(s.name, s.fileKind)
  const kinds = rows.stats.map((s, ix) => {
    const existing = facts.existing.get(s.name)
    if (existing && s.fileKind && s.fileKind !== existing.kind) refused.add(ix)
    return existing?.kind ?? fileKinds.get(s.name) ?? facts.defaultKind
  })
  const keys = rows.stats.map((s) => seriesKey(s.name, s.tags))
  const conflicts = [...refused]
  const field = (k: Kind) => (k === 'counter' ? 'count' : 'value')
  read.place(conflicts.map((ix) => rows.stats[ix].where)).forEach((line, i) => {
    const s = rows.stats[conflicts[i]]
    const kind = kinds[conflicts[i]]
    errors.push({
      line,
      stat: s.name,
      order: -1,
      message: `type conflict: stat "${s.name}" is a ${kind}; this file has it as a ${s.fileKind} (${field(kind)}, not ${field(s.fileKind!)}); its points are skipped`,
    })
  })
  for (const b of rows.badValues)
    errors.push({ line: b.where as number, message: Rows.valueMessage(b.raw, kinds[b.stat]), stat: rows.stats[b.stat].name, order: 0 })

  // New stats take the places the plan has left in order of their first point that could be stored.
  let room = Math.max(0, facts.trackedStats - facts.statsHeld)
  const place = new Int8Array(rows.stats.length) // 0 undecided, 1 has a place, 2 over the limit
  const overLimit = (ix: number) => {
    if (!place[ix]) {
      if (facts.existing.has(keys[ix])) place[ix] = 1
      else if (room > 0) {
        room--
        place[ix] = 1
      } else place[ix] = 2
    }
    return place[ix] === 2
  }

  const stats: StatSummary[] = rows.stats.map((s, ix) => ({
    name: s.name,
    ...(s.tags ? { tags: s.tags } : {}),
    kind: kinds[ix],
    points: 0,
    new_stat: !facts.existing.has(keys[ix]),
    points_accepted: 0,
    points_trimmed: 0,
    points_duplicate: 0,
    trimmed_by: null,
  }))
  const accepted = new Uint8Array(rows.stat.length)
  let allowance = facts.freeSlot ? facts.allowance : 0
  const checkDuplicates = facts.imported.size > 0
  const totals = { accepted: 0, trimmed: 0, duplicate: 0 }
  for (let i = 0; i < rows.stat.length; i++) {
    const ix = rows.stat[i]
    const s = stats[ix]
    if (refused.has(ix)) {
      pointsInvalid++
      continue
    }
    s.points++
    const existing = facts.existing.get(keys[ix])
    if (checkDuplicates && existing && facts.imported.has(duplicateKey(existing.id, rows.t[i], importIkey(rows.value[i], rows.occ[i])))) {
      s.points_duplicate++
      totals.duplicate++
      continue
    }
    const by: TrimmedBy | null = !facts.freeSlot ? 'free_tier_full' : overLimit(ix) ? 'stat_limit' : allowance <= 0 ? 'daily_limit' : null
    if (by) {
      s.points_trimmed++
      s.trimmed_by ??= by
      totals.trimmed++
      continue
    }
    allowance--
    accepted[i] = 1
    s.points_accepted++
    totals.accepted++
  }

  errors.sort((a, b) => a.line - b.line || a.order - b.order)
  return {
    format,
    stats,
    kinds,
    accepted,
    points_total: rows.pointsTotal,
    points_accepted: totals.accepted,
    points_trimmed: totals.trimmed,
    points_duplicate: totals.duplicate,
    points_invalid: pointsInvalid,
    errors_count: errors.length,
    errors: errors.slice(0, MAX_LISTED_ERRORS).map(({ order: _, ...e }) => e),
  }
}
