// Previewing and starting an import (docs/decisions.md §I-4.6.2, §9
// and 15). Both read the file and plan it with the same functions; the real
// import then takes what the plan needs (free-tier slot, new stats, the day's
// allowance) exactly as a write would, stores the accepted points with the
// import and queues the job. Anything that fails before the job is queued
// gives back what was taken, so a refused import leaves nothing behind.
import type { Config } from '../config.js'
import type { Sql } from '../db.js'
import { AppError, conflict } from '../errors.js'
import { claimFreeSlot, type Account } from '../accounts/repo.js'
import type { Limits } from '../ingest/limits.js'
import { planOf } from '../plans.js'
import type { Queues } from '../queues.js'
import type { StatDirectory } from '../stats/directory.js'
import { seriesKey } from '../ingest/tags.js'
import { countSeries, dropUnusedStats, setUnitsWhereUnset, findSeriesRows, findStatsByName, type Kind, type Stat } from '../stats/repo.js'
import { readImportFile, type ReadFile } from './formats.js'
import { duplicateKey, planImport, type ImportFacts, type ImportPlan } from './plan.js'
import { deleteImport, importJson, insertImport } from './repo.js'

export interface ImportDeps {
  config: Pick<Config, 'freeTierSlots'>
  sql: Sql
  limits: Limits
  directory: StatDirectory
  queues: Queues
}

export interface ImportOptions {
  /** ?kind=: the kind of new stats the file does not type. */
  kind?: Kind
}

/** Bytes per accepted point in the stored payload: stat position (u32), t (f64), value (f64), occurrence (u32). */
export const PACKED_POINT_BYTES = 24

/** The preview: what the import would do, writing nothing. */
export async function previewImport(deps: ImportDeps, account: Account, file: Buffer, opts: ImportOptions, nowSeconds: number) {
  const read = readImportFile(file, nowSeconds)
  const facts = await gatherFacts(deps, account, read, opts)
  const plan = planImport(read, {
    ...facts,
    allowance: Math.max(0, planOf(account.plan).pointsPerDay - (await deps.limits.pointsUsedToday(account.id))),
    freeSlot: await holdsOrCanClaimSlot(deps, account),
  })
  return { dry_run: true as const, ...summary(plan), warnings: warnings(read, account, nowSeconds) }
}

/** The real import: takes quota, creates the new stats, stores the accepted points with the import and queues its job. */
export async function startImport(deps: ImportDeps, account: Account, file: Buffer, opts: ImportOptions, nowSeconds: number) {
  const { sql, limits, directory } = deps
  const plan0 = planOf(account.plan)
  const read = readImportFile(file, nowSeconds)
  const facts = await gatherFacts(deps, account, read, opts)
  // What the plan would take with the whole day's allowance: its new stats and its point count.
  const wanted = planImport(read, { ...facts, allowance: Infinity, freeSlot: true })
  let granted = 0
  const created: string[] = []
  let importId: string | undefined
  try {
    let freeSlot = true
    if (wanted.points_accepted > 0 && account.plan === 'free') freeSlot = await claimFreeSlot(sql, account.id, deps.config.freeTierSlots)
    const ids = new Map<string, string>([...facts.existing].map(([k, s]) => [k, s.id]))
    const newStats = wanted.stats
      .filter((s) => s.new_stat && s.points_accepted > 0)
      .map((s) => ({ name: s.name, kind: s.kind, ...(s.tags ? { tags: s.tags } : {}) }))
    if (freeSlot && newStats.length) {
      const made = await directory.create(account.id, newStats, plan0.trackedStats)
      if (!(made instanceof Map))
        throw new AppError(
          'quota',
          'stat_limit',
          `plan limit reached: the ${plan0.name} plan tracks at most ${plan0.trackedStats} stats (stats were created while the import started; preview again)`,
        )
      for (const r of made.values()) {
        // A writer created the stat meanwhile, with the other kind: the plan's kinds no longer hold.
        const planned = newStats.find((n) => n.name === r.stat.name)
        if (!r.created && planned && planned.kind !== r.stat.kind)
          throw conflict('kind_conflict', `stat "${r.stat.name}" was just created as a ${r.stat.kind} by a write; preview the import again`)
        ids.set(seriesKey(r.stat.name, r.stat.tags), r.stat.id)
        if (r.created) created.push(r.stat.id)
      }
    }
    if (freeSlot && wanted.points_accepted > 0) granted = await limits.reservePoints(account.id, plan0, wanted.points_accepted, false)
    const plan = planImport(read, { ...facts, allowance: granted, freeSlot })

    const { statIds, payload } = pack(read, plan, ids)
    // Stats created for points the allowance then trimmed hold nothing: they go again.
    const used = new Set(statIds)
    await dropUnusedStats(
      sql,
      created.filter((id) => !used.has(id)),
    )
    const row = await insertImport(sql, account.id, plan, statIds, payload)
    await setUnitsWhereUnset(sql, account.id, read.rows.units)
    importId = row.id
    if (row.status === 'queued') await deps.queues.enqueue('import-points', { import_id: row.id }, { jobId: row.id })
    return importJson(row)
  } catch (err) {
    // Nothing was queued: give back the allowance, the new stats and the import row.
    await limits.refundPoints(account.id, granted).catch(() => {})
    if (importId) await deleteImport(sql, importId).catch(() => {})
    await dropUnusedStats(sql, created).catch(() => {})
    // Anything else goes to the error middleware as it is: a 503 when a dependency is down, else a masked 500
    // with the request id, logged. Never the database's own text in the answer.
    throw err
  }
}

/** The preview's fields, from a plan. */
function summary(plan: ImportPlan) {
  const { kinds: _k, accepted: _a, ...rest } = plan
  return rest
}

/** Existing stats, stat count and already-imported points: what the plan needs from the database. */
async function gatherFacts(
  deps: ImportDeps,
  account: Account,
  read: ReadFile,
  opts: ImportOptions,
): Promise<Omit<ImportFacts, 'allowance' | 'freeSlot'>> {
  const { sql } = deps
  // The file's stats by name (their kinds), and its tagged series that exist, by seriesKey.
  const names = [...new Set(read.rows.stats.map((s) => s.name))]
  const tagged = read.rows.stats.filter((s) => s.tags).map((s) => ({ name: s.name, tags: s.tags }))
  const existing = new Map<string, Stat>(
    [...(await findStatsByName(sql, account.id, names)), ...(await findSeriesRows(sql, account.id, tagged))].map((s) => [
      seriesKey(s.name, s.tags),
      s,
    ]),
  )
  const n = await countSeries(sql, account.id)
  return {
    existing,
    statsHeld: n,
    trackedStats: planOf(account.plan).trackedStats,
    defaultKind: opts.kind ?? 'gauge',
    imported: await importedKeys(sql, [...existing.values()], read),
  }
}

/** Keys of points an earlier import stored in these stats within the file's time span. */
async function importedKeys(sql: Sql, stats: Stat[], read: ReadFile): Promise<Set<string>> {
  const out = new Set<string>()
  const { t } = read.rows
  if (!stats.length || !t.length) return out
  let lo = Infinity
  let hi = -Infinity
  for (const x of t) {
    if (x < lo) lo = x
    if (x > hi) hi = x
  }
  const rows = await sql<{ stat_id: string; t: string; ikey: string }[]>`
    select stat_id, extract(epoch from ts)::bigint::text as t, ikey from point_ikeys
    where stat_id = any(${stats.map((s) => s.id)}::uuid[]) and ts between to_timestamp(${lo}) and to_timestamp(${hi}) and ikey like 'import:%'`
  for (const r of rows) out.add(duplicateKey(r.stat_id, Number(r.t), r.ikey))
  return out
}

async function holdsOrCanClaimSlot(deps: ImportDeps, account: Account): Promise<boolean> {
  if (account.plan !== 'free') return true
  const [r] = await deps.sql<{ ok: boolean }[]>`
    select (select free_slot_claimed_at is not null from accounts where id = ${account.id})
        or (select claimed < ${deps.config.freeTierSlots} from free_tier) as ok`
  return r.ok
}

/** Accepted points, packed for the job, and the stat ids they refer to by position. */
function pack(read: ReadFile, plan: ImportPlan, ids: Map<string, string>): { statIds: string[]; payload: Buffer } {
  const { rows } = read
  const position = new Map<number, number>()
  const statIds: string[] = []
  const payload = Buffer.allocUnsafe(plan.points_accepted * PACKED_POINT_BYTES)
  let at = 0
  for (let i = 0; i < rows.stat.length; i++) {
    if (!plan.accepted[i]) continue
    const ix = rows.stat[i]
    let pos = position.get(ix)
    if (pos === undefined) {
      position.set(ix, (pos = statIds.length))
      statIds.push(ids.get(seriesKey(rows.stats[ix].name, rows.stats[ix].tags))!)
    }
    payload.writeUInt32LE(pos, at)
    payload.writeDoubleLE(rows.t[i], at + 4)
    payload.writeDoubleLE(rows.value[i], at + 12)
    payload.writeUInt32LE(rows.occ[i], at + 20)
    at += PACKED_POINT_BYTES
  }
  return { statIds, payload }
}

/** What the user should know that is not an error: points older than the plan keeps visible. */
function warnings(read: ReadFile, account: Account, nowSeconds: number): string[] {
  const plan = planOf(account.plan)
  const cutoff = nowSeconds - plan.retentionDays * 86_400
  let old = 0
  for (const t of read.rows.t) if (t < cutoff) old++
  return old
    ? [
        `${old} point${old === 1 ? ' is' : 's are'} older than the ${plan.name} plan's ${plan.retentionDays}-day retention: stored, but charts and exports show only the last ${plan.retentionDays} days`,
      ]
    : []
}
