// The anomaly sweep (docs/decisions.md §11): pages through the stats of
// accounts whose plan detects anomalies and steps each one's newly completed
// hours through the detector, recording its state, its reason and the
// incidents it opens and closes. Every page is one transaction that locks its
// state rows FOR UPDATE SKIP LOCKED, and a row is only picked while its last
// stepped hour is older than the newest complete one, so two sweeps running at
// once split the stats between them and score each hour once.
import type postgres from 'postgres'
import type { Db, Sql, TxSql } from '../db.js'
import { DETECTING_PLANS } from '../plans.js'
import type { Kind } from '../stats/repo.js'
import { replaySeries, type ReplayedIncident } from './backtest.js'
import {
  HOUR,
  needsWeeks,
  restoreState,
  WEEKLY_HOURS,
  WINDOW_HOURS,
  type Cycle,
  type DetectorState,
  type Hour,
  type OpenIncident,
  type Sensitivity,
} from './detector.js'
import { carriersOf, readWholeHourly, type Carrier, type WholeSeries } from './whole.js'

/** An hour counts as complete this long after it ends, so that its last points are persisted before it is scored. */
export const SETTLE_SECONDS = 60
export const PAGE_SIZE = 500
/** A stat further behind than this is evaluated afresh (warm-up, then its newest hour) rather than hour by hour. */
const MAX_CATCH_UP_HOURS = WINDOW_HOURS
/** History written behind the sweep is replayed from at most this far back (the back-test's default range). */
export const RESCORE_HOURS = 30 * 24
/**
 * A sweep starts no replay of history that would end past this long, judged by its longest page of replays so far
 * (docs/decisions.md §D-W): the stats it leaves keep their mark and are replayed by the next sweeps, so one sweep stays short when thousands of stats become eligible at once (an import,
 * an upgrade); the hours of stats already scored are stepped whatever the time. At least one replay a sweep.
 */
export const REPLAY_BUDGET_MS = 6_000

/** The earliest hour a replay of history reaches back to at `now` (the sweep clamps every mark to it). */
const rescoreFrom = (now: Date) => new Date((newestCompleteHour(now) - RESCORE_HOURS * HOUR) * 1000)

/**
 * Marks every stat of an account that has just become entitled to detection again (an upgrade after a
 * downgrade) for a replay of its history: its state rows stopped where the plan stopped detecting, and the
 * history written meanwhile was never marked (refreshes mark entitled accounts' stats only). Stats without a
 * state row are marked by the next sweep when it creates one.
 */
export async function markHistoryForScoring(sql: Db, accountId: string, now: Date): Promise<void> {
  await sql`
    insert into anomaly_rescore as r (stat_id, from_hour)
    select st.stat_id, ${rescoreFrom(now)} from anomaly_state st where st.account_id = ${accountId}
    on conflict (stat_id) do update set from_hour = least(r.from_hour, excluded.from_hour)`
}

/**
 * Sets a stat's anomaly sensitivity and, when it changed, marks its history for a replay at the new one: the list
 * then holds what the chart (the back-test, at the stat's sensitivity) flags. False: no such stat.
 */
export async function setSensitivity(sql: Db, statId: string, sensitivity: Sensitivity, now: Date): Promise<boolean> {
  const [row] = await sql<{ changed: boolean }[]>`
    update stats s set anomaly_sensitivity = ${sensitivity}
    from (select anomaly_sensitivity as before from stats where id = ${statId}) b
    where s.id = ${statId}
    returning b.before <> ${sensitivity} as changed`
  if (!row) return false
  if (row.changed)
    await sql`
      insert into anomaly_rescore as r (stat_id, from_hour)
      select st.stat_id, ${rescoreFrom(now)} from anomaly_state st where st.stat_id = ${statId}
      on conflict (stat_id) do update set from_hour = least(r.from_hour, excluded.from_hour)`
  return true
}

/** A stat's anomaly sensitivity. */
export async function sensitivityOf(sql: Db, statId: string): Promise<Sensitivity> {
  const [row] = await sql<{ s: Sensitivity }[]>`select anomaly_sensitivity as s from stats where id = ${statId}`
  return row?.s ?? 'normal'
}

/**
 * The refresh's mark (a ClaimMark, shared/points/rollups.ts) of stats for a replay by the sweep
 * (sql/0021_anomaly_rescore.sql): points folded into an hour the sweep already scored (a backfill, an import,
 * a late point), or into any hour of a stat it never scored; stats of plans that detect anomalies only.
 * Waits on a marker the sweep holds (it is replaying that stat): the marker written after the sweep commits is
 * then the next sweep's, so no folded hour goes unscored.
 */
export function markFoldedForScoring(sql: Db) {
  // A tagged series' points mark its stat (the stat is swept as a whole: docs/decisions.md §D-W).
  return sql`rescore as (
      insert into anomaly_rescore as r (stat_id, from_hour)
      select coalesce(s.parent_id, s.id), date_trunc('hour', min(c.bucket), 'UTC') from claimed c
      join stats s on s.id = c.stat_id
      join accounts a on a.id = s.account_id and a.plan = any(${DETECTING_PLANS})
      left join anomaly_state st on st.stat_id = coalesce(s.parent_id, s.id)
      group by coalesce(s.parent_id, s.id), st.last_hour
      having st.last_hour is null or date_trunc('hour', min(c.bucket), 'UTC') <= st.last_hour
      order by 1
      on conflict (stat_id) do update set from_hour = least(r.from_hour, excluded.from_hour)
      returning 1
    )`
}

/** Unix seconds of the newest hour that is complete (and settled) at `now`. */
export function newestCompleteHour(now: Date): number {
  return Math.floor((now.getTime() / 1000 - SETTLE_SECONDS) / HOUR) * HOUR - HOUR
}

export interface SweepResult {
  reached: number
  scored: number
  hours: number
  opened: number
  closed: number
  /** Stats whose history replay waits for the next sweep (the replay budget was spent). */
  deferred: number
}

interface DueRow {
  stat_id: string
  account_id: string
  kind: Kind
  sensitivity: Sensitivity
  created_at: Date
  last_hour: Date | null
  detector: DetectorState | null
  has_rollup: boolean
  refreshed_at: Date | null
  pending: boolean
}

export interface SweepOptions {
  staleAfterSeconds: number
  pageSize?: number
  /** REPLAY_BUDGET_MS unless given. */
  replayBudgetMs?: number
}

/** What a sweep has left for replays: a deadline, whether one has run (the first always does), and the longest page of them so far. */
interface Budget {
  until: number
  replayed: number
  pageMs: number
}

export async function sweep(sql: Sql, now: Date, opts: SweepOptions): Promise<SweepResult> {
  const newest = newestCompleteHour(now)
  const [{ id: sweepId }] = await sql<{ id: string }[]>`insert into anomaly_sweeps (started_at) values (${now}) returning id`
  // Stats of entitled accounts get a state row (a plan change from free starts detection at the next sweep), and
  // their history is marked for scoring: what was written before the plan detected anomalies
  // (a backfill on the free plan) is replayed, as it is for an account created on a paid plan, whose refreshes
  // mark it. Without the mark a new row starts at the newest hour and the older incidents never reach the list.
  await sql`
    with added as (
      insert into anomaly_state (stat_id, account_id)
      select s.id, s.account_id from stats s join accounts a on a.id = s.account_id
      where a.plan = any(${DETECTING_PLANS}) and s.parent_id is null and not exists (select 1 from anomaly_state st where st.stat_id = s.id)
      on conflict (stat_id) do nothing
      returning stat_id
    )
    insert into anomaly_rescore as r (stat_id, from_hour) select stat_id, ${rescoreFrom(now)} from added
    on conflict (stat_id) do update set from_hour = least(r.from_hour, excluded.from_hour)`
  const total: SweepResult = { reached: 0, scored: 0, hours: 0, opened: 0, closed: 0, deferred: 0 }
  const budget: Budget = { until: performance.now() + (opts.replayBudgetMs ?? REPLAY_BUDGET_MS), replayed: 0, pageMs: 0 }
  let cursor = '00000000-0000-0000-0000-000000000000'
  for (;;) {
    const page = (await sql.begin((tx) => sweepPage(tx, cursor, newest, now, opts, budget))) as PageResult
    total.reached += page.reached
    total.scored += page.scored
    total.hours += page.hours
    total.opened += page.opened
    total.closed += page.closed
    total.deferred += page.deferred
    if (!page.last) break
    cursor = page.last
  }
  await sql`update anomaly_sweeps set finished_at = now(), stats_reached = ${total.reached}, hours_scored = ${total.hours} where id = ${sweepId}`
  // The sweep log only needs to answer "when did the last sweep run": two days are plenty.
  await sql`delete from anomaly_sweeps where started_at < ${now}::timestamptz - interval '2 days'`
  return total
}

interface PageResult extends SweepResult {
  /** The last stat id of the page, or null when the page was the last. */
  last: string | null
}

async function sweepPage(tx: TxSql, cursor: string, newest: number, now: Date, opts: SweepOptions, budget: Budget): Promise<PageResult> {
  const size = opts.pageSize ?? PAGE_SIZE
  const rows = await pickDue(tx, cursor, newest, size)
  const result: PageResult = {
    reached: rows.length,
    scored: 0,
    hours: 0,
    opened: 0,
    closed: 0,
    deferred: 0,
    last: rows.length === size ? rows[rows.length - 1].stat_id : null,
  }
  if (!rows.length) return result
  // Past the replay budget, the stats marked for a replay wait (unlocked, their marks kept) for the next sweep; and
  // before it, when a page of replays as long as the longest so far would end past it (a page of 500 stats seen
  // afresh takes seconds, which a sweep started at 5.9 s would add to its 6).
  const t0 = performance.now()
  const over = budget.replayed > 0 && t0 + budget.pageMs > budget.until
  const marks = over ? new Map<string, number>() : await lockMarks(tx, rows)
  const waiting = over ? new Set((await markedOf(tx, rows)).map((m) => m.stat_id)) : new Set<string>()

  const declined = await declineUnready(tx, rows, now, opts.staleAfterSeconds)
  const plans = new Map(
    rows
      .filter((r) => !declined.includes(r) && !waiting.has(r.stat_id))
      .map((r) => [r.stat_id, replayPlan(r, marks.get(r.stat_id), newest)]),
  )
  // A stat another sweep replayed while this page was being picked (its mark was seen, its hours are all scored): nothing to do.
  const due = rows.filter((r) => plans.has(r.stat_id) && plans.get(r.stat_id)!.start <= newest)
  result.deferred = waiting.size
  result.reached = declined.length + due.length
  if (marks.size) budget.replayed += marks.size
  const series = await readSeries(tx, due, plans, newest)

  // Every stat of the page is scored first (no statement per stat), then its incidents are written in four statements.
  const updates: StateUpdate[] = []
  const writes = emptyWrites()
  for (const r of due) {
    const scored = scoreStat(r, series.get(r.stat_id)!, plans.get(r.stat_id)!, marks.has(r.stat_id), writes)
    result.scored++
    result.hours += scored.hours
    result.opened += scored.opened
    result.closed += scored.closed
    updates.push(scored.update)
  }
  await saveIncidents(tx, writes)

  const rescored = due.filter((r) => marks.has(r.stat_id)).map((r) => r.stat_id)
  if (rescored.length) await tx`delete from anomaly_rescore where stat_id = any(${rescored}::uuid[])`
  await saveStates(tx, updates, now)
  if (marks.size) budget.pageMs = Math.max(budget.pageMs, performance.now() - t0)
  const accounts = [...new Set(rows.map((r) => r.account_id))]
  await tx`
    insert into anomaly_account_sweeps (account_id, swept_at) select unnest(${accounts}::uuid[]), ${now}
    on conflict (account_id) do update set swept_at = greatest(anomaly_account_sweeps.swept_at, excluded.swept_at)`
  return result
}

/** The page's stats due a look (an hour to score, or history to replay), locked: another sweep takes the others. */
function pickDue(tx: TxSql, cursor: string, newest: number, size: number): Promise<DueRow[]> {
  return tx<DueRow[]>`
    select st.stat_id, st.account_id, s.kind, s.anomaly_sensitivity as sensitivity, s.created_at, st.last_hour, st.detector,
           rs.refreshed_at is not null as has_rollup, rs.refreshed_at, rs.pending
    from anomaly_state st
    join stats s on s.id = st.stat_id
    join accounts a on a.id = st.account_id
    cross join lateral ${rollupOfWhole(tx, tx`st.stat_id`)} rs
    where st.stat_id > ${cursor} and a.plan = any(${DETECTING_PLANS})
      -- IN, not a correlated EXISTS: under the OR the planner ran the EXISTS once per row of every page (measured:
      -- 17 s of a 22 s steady sweep of 10,000 stats); IN becomes one hashed subplan (0.1 s).
      and (st.last_hour is null or st.last_hour < ${new Date(newest * 1000)} or st.stat_id in (select r.stat_id from anomaly_rescore r))
    order by st.stat_id
    limit ${size}
    for update of st skip locked`
}

/** The page's stats marked for a replay, read without locking them (a sweep past its replay budget leaves them). */
function markedOf(tx: TxSql, rows: DueRow[]) {
  return tx<{ stat_id: string }[]>`select stat_id from anomaly_rescore where stat_id = any(${rows.map((r) => r.stat_id)}::uuid[])`
}

/**
 * Stats whose history changed behind the sweep (sql/0021_anomaly_rescore.sql), with the hour to replay from,
 * locked so that a refresh marking one meanwhile waits and leaves its mark for the next sweep; one a refresh
 * holds now is replayed next time.
 */
async function lockMarks(tx: TxSql, rows: DueRow[]): Promise<Map<string, number>> {
  if (!rows.length) return new Map()
  const marks = await tx<{ stat_id: string; from_hour: Date }[]>`
    select stat_id, from_hour from anomaly_rescore where stat_id = any(${rows.map((r) => r.stat_id)}::uuid[]) for update skip locked`
  return new Map(marks.map((m) => [m.stat_id, Math.floor(m.from_hour.getTime() / 1000 / HOUR) * HOUR]))
}

/** Stats that cannot be scored now (no rollups yet, or rollups gone stale behind pending points), recorded as skipped with why. */
async function declineUnready(tx: TxSql, rows: DueRow[], now: Date, staleAfterSeconds: number): Promise<DueRow[]> {
  const staleBefore = now.getTime() - staleAfterSeconds * 1000
  const declined = rows.filter((r) => !r.has_rollup || (r.pending && r.refreshed_at!.getTime() < staleBefore))
  if (declined.length) {
    await tx`
      update anomaly_state st set reached_at = ${now}, state = 'skipped', reason = u.reason
      from unnest(${declined.map((r) => r.stat_id)}::uuid[], ${declined.map((r) => (r.has_rollup ? 'stale' : 'no_rollup'))}::text[]) as u(id, reason)
      where st.stat_id = u.id`
  }
  return declined
}

interface ReplayPlan {
  /** The first hour to step. */
  start: number
  /** From a fresh state (warmed over the history before `start`) rather than the stored one. */
  fresh: boolean
  /** Reads three weeks of history before `start`, not the window. */
  weeks: boolean
}

/**
 * Where a stat's replay starts: after its last scored hour; from the earliest changed hour (at most
 * RESCORE_HOURS back) when history was written behind the sweep; at the newest hour for a stat seen afresh.
 */
function replayPlan(r: DueRow, mark: number | undefined, newest: number): ReplayPlan {
  const last = r.last_hour ? r.last_hour.getTime() / 1000 : null
  const behind = last === null || newest - last > MAX_CATCH_UP_HOURS * HOUR
  const next = behind ? newest : last! + HOUR
  // A stat younger than three weeks cannot show a weekly cycle yet: its short read is enough (history imported
  // before it was created is marked, and replayed with the long one).
  const old = r.created_at.getTime() / 1000 <= next - WEEKLY_HOURS * HOUR
  if (mark === undefined) return { start: next, fresh: behind, weeks: old && needsWeeks(r.detector && restoreState(r.detector), next) }
  return { start: Math.min(next, Math.max(mark, newest - RESCORE_HOURS * HOUR)), fresh: true, weeks: true }
}

/**
 * Two history reads for the page, each from the earliest hour any of its stats needs: three weeks before the
 * start for the stats with a weekly cycle, due a look for one (about one in 24 an hour) or replayed afresh, the
 * window for the rest.
 */
async function readSeries(tx: TxSql, due: DueRow[], plans: Map<string, ReplayPlan>, newest: number): Promise<Map<string, WholeSeries>> {
  const series = new Map<string, WholeSeries>()
  for (const group of [due.filter((r) => plans.get(r.stat_id)!.weeks), due.filter((r) => !plans.get(r.stat_id)!.weeks)]) {
    if (!group.length) continue
    const from =
      Math.min(...group.map((r) => plans.get(r.stat_id)!.start)) -
      (plans.get(group[0].stat_id)!.weeks ? WEEKLY_HOURS : WINDOW_HOURS - 1) * HOUR
    const read = await readWholeHourly(
      tx,
      group.map((r) => ({ id: r.stat_id, kind: r.kind, since: r.created_at })),
      new Date(from * 1000),
      new Date((newest + HOUR) * 1000),
    )
    for (const [id, s] of read) series.set(id, s)
  }
  return series
}

interface StateUpdate {
  id: string
  state: DetectorState
  last: Hour
}

/** A page's incident writes, made in four statements once every stat of the page is scored (saveIncidents). */
interface IncidentWrites {
  /** Incidents left open before a fresh start, closed where the detector stopped watching them. */
  close: Array<{ statId: string; startedAt: number; endedAt: number; peak: unknown; explanation: string }>
  /** Replays of marked history: from `from` on, the stat's incidents not found again go. */
  forget: Array<{ statId: string; from: number; kept: number[] }>
  /** Incidents found by the replay, inserted or updated in place (keeping when each was first recorded). */
  upsert: Array<{ accountId: string; statId: string; inc: ReplayedIncident; series: Carrier[] | null }>
  /** An incident opened by an earlier sweep and still open: its peak kept current. */
  peak: Array<{ statId: string; open: OpenIncident; series: Carrier[] | null }>
}

const emptyWrites = (): IncidentWrites => ({ close: [], forget: [], upsert: [], peak: [] })

/**
 * Replays one stat's hours from its plan's start and collects the incidents it finds into `writes`: a replay of
 * marked history replaces what it no longer finds, an incident left open before a fresh start is closed where the
 * detector stopped watching it, one still open keeps its peak current. Pure: the page writes them all at once.
 */
function scoreStat(
  r: DueRow,
  s: WholeSeries,
  { start, fresh }: ReplayPlan,
  marked: boolean,
  writes: IncidentWrites,
): { hours: number; opened: number; closed: number; update: StateUpdate } {
  let opened = 0
  let closed = 0
  const leftOpen = r.detector?.incident
  if (fresh && leftOpen && r.last_hour && leftOpen.startedAt < start) {
    // Replayed from after its start (or too far behind to step hour by hour): an incident left open is closed
    // where the detector stopped watching it.
    writes.close.push({
      statId: r.stat_id,
      startedAt: leftOpen.startedAt,
      endedAt: Math.min(start, r.last_hour.getTime() / 1000 + HOUR),
      peak: leftOpen.peak,
      explanation: leftOpen.explanation,
    })
    closed++
  }
  const replayed = replaySeries(
    r.kind,
    s.values,
    s.from,
    (start - s.from) / HOUR,
    fresh ? undefined : restoreState(r.detector),
    r.sensitivity,
  )
  // The series that carry each incident, for a stat with tagged ones (docs/decisions.md §D-W).
  const carriers = (i: { startedAt: number; endedAt: number | null; direction: OpenIncident['direction']; peak: { cycle?: Cycle } }) =>
    s.series
      ? carriersOf(r.kind, s, s.series, { startedAt: i.startedAt, endedAt: i.endedAt, direction: i.direction, cycle: i.peak.cycle })
      : null
  // The replay finds the incidents from `start` on again: what it no longer finds there goes; what it finds again
  // is updated in place (keeping when it was first recorded, which anomaly alerts go by).
  if (marked) writes.forget.push({ statId: r.stat_id, from: start, kept: replayed.incidents.map((i) => i.startedAt) })
  for (const inc of replayed.incidents) {
    writes.upsert.push({ accountId: r.account_id, statId: r.stat_id, inc, series: carriers(inc) })
    if (inc.endedAt !== null) closed++
    else opened++
  }
  const open = replayed.state.incident
  if (open && !replayed.incidents.some((i) => i.startedAt === open.startedAt))
    writes.peak.push({ statId: r.stat_id, open, series: carriers({ ...open, endedAt: null }) })
  return {
    hours: replayed.hours.length,
    opened,
    closed,
    update: { id: r.stat_id, state: replayed.state, last: replayed.hours[replayed.hours.length - 1] },
  }
}

const isoOf = (t: number | null) => (t === null ? null : new Date(t * 1000).toISOString())
const jsonOf = (x: unknown) => (x === null || x === undefined ? null : JSON.stringify(x))

/** A page's incident writes (scoreStat), each kind in one statement over arrays. */
async function saveIncidents(tx: TxSql, w: IncidentWrites): Promise<void> {
  if (w.close.length)
    await tx`
      update anomalies a set status = 'closed', ended_at = u.ended_at::timestamptz, level_shift = false, peak = u.peak::jsonb, explanation = u.explanation
      from unnest(${w.close.map((c) => c.statId)}::uuid[], ${w.close.map((c) => isoOf(c.startedAt))}::text[],
                  ${w.close.map((c) => isoOf(c.endedAt))}::text[], ${w.close.map((c) => jsonOf(c.peak))}::text[],
                  ${w.close.map((c) => c.explanation)}::text[]) as u(stat_id, started_at, ended_at, peak, explanation)
      where a.stat_id = u.stat_id and a.started_at = u.started_at::timestamptz and a.status = 'open'`
  if (w.forget.length) {
    const kept = w.forget.flatMap((f) => f.kept.map((t) => ({ id: f.statId, t })))
    await tx`
      delete from anomalies a
      using unnest(${w.forget.map((f) => f.statId)}::uuid[], ${w.forget.map((f) => isoOf(f.from))}::text[]) as m(stat_id, from_hour)
      where a.stat_id = m.stat_id and a.started_at >= m.from_hour::timestamptz
        and (a.stat_id, a.started_at) not in (
          select k.stat_id, k.started_at::timestamptz from unnest(${kept.map((k) => k.id)}::uuid[], ${kept.map((k) => isoOf(k.t))}::text[]) as k(stat_id, started_at))`
  }
  if (w.upsert.length) {
    const u = w.upsert
    await tx`
      insert into anomalies (account_id, stat_id, detector, direction, status, level_shift, started_at, ended_at, peak, explanation, series)
      select account_id, stat_id, detector, direction, status, level_shift::boolean, started_at::timestamptz, ended_at::timestamptz, peak::jsonb, explanation, series::jsonb
      from unnest(${u.map((x) => x.accountId)}::uuid[], ${u.map((x) => x.statId)}::uuid[], ${u.map((x) => x.inc.detector)}::text[],
                  ${u.map((x) => x.inc.direction)}::text[], ${u.map((x) => (x.inc.endedAt === null ? 'open' : 'closed'))}::text[],
                  ${u.map((x) => String(x.inc.levelShift))}::text[], ${u.map((x) => isoOf(x.inc.startedAt))}::text[], ${u.map((x) => isoOf(x.inc.endedAt))}::text[],
                  ${u.map((x) => jsonOf(x.inc.peak))}::text[], ${u.map((x) => x.inc.explanation)}::text[], ${u.map((x) => jsonOf(x.series))}::text[])
        as v(account_id, stat_id, detector, direction, status, level_shift, started_at, ended_at, peak, explanation, series)
      on conflict (stat_id, started_at) do update set status = excluded.status, ended_at = excluded.ended_at, level_shift = excluded.level_shift,
        peak = excluded.peak, explanation = excluded.explanation, series = excluded.series`
  }
  if (w.peak.length)
    await tx`
      update anomalies a set peak = u.peak::jsonb, explanation = u.explanation, detector = u.detector, series = u.series::jsonb
      from unnest(${w.peak.map((p) => p.statId)}::uuid[], ${w.peak.map((p) => isoOf(p.open.startedAt))}::text[],
                  ${w.peak.map((p) => jsonOf(p.open.peak))}::text[], ${w.peak.map((p) => p.open.explanation)}::text[],
                  ${w.peak.map((p) => p.open.detector)}::text[], ${w.peak.map((p) => jsonOf(p.series))}::text[])
        as u(stat_id, started_at, peak, explanation, detector, series)
      where a.stat_id = u.stat_id and a.started_at = u.started_at::timestamptz`
}

/**
 * A stat's rollup as a whole (its own row and its tagged series'): when any of them last took points (null: none has
 * a rollup yet) and whether any has points waiting. A lateral subquery for `id`, an expression of the outer query.
 */
export function rollupOfWhole(sql: Db, id: postgres.Fragment): postgres.Fragment {
  return sql`(
      select max(rs.refreshed_at) as refreshed_at,
             exists (select 1 from rollup_pending p where p.stat_id = ${id}
                     or p.stat_id = any(array(select c.id from stats c where c.parent_id = ${id}))) as pending
      from rollup_state rs
      where rs.stat_id = ${id} or rs.stat_id = any(array(select c.id from stats c where c.parent_id = ${id}))
    )`
}

/** The scored stats' detector states, their newest hour's verdict and explanation, in one statement. */
async function saveStates(tx: TxSql, updates: StateUpdate[], now: Date): Promise<void> {
  if (!updates.length) return
  const armed = (h: Hour) => h.window.verdict === 'used' || h.streaming.armed
  const iso = (t: number | null) => (t === null ? null : new Date(t * 1000).toISOString())
  await tx`
    update anomaly_state st set last_hour = u.last_hour::timestamptz, reached_at = ${now}, evaluated_at = ${now},
      state = u.state, reason = u.reason, window_verdict = u.verdict, window_samples = u.samples::int,
      last_detected_at = u.detected::timestamptz, detector = u.detector::jsonb, last_explanation = u.explanation
    from unnest(${updates.map((u) => u.id)}::uuid[], ${updates.map((u) => iso(u.state.lastHour))}::text[],
                ${updates.map((u) => (armed(u.last) ? 'evaluated' : 'skipped'))}::text[],
                ${updates.map((u) => (armed(u.last) ? null : u.last.window.verdict))}::text[],
                ${updates.map((u) => u.last.window.verdict)}::text[], ${updates.map((u) => String(u.last.window.samples))}::text[],
                ${updates.map((u) => iso(u.state.lastDetectedAt))}::text[], ${updates.map((u) => JSON.stringify(u.state))}::text[],
                ${updates.map((u) => u.last.explanation)}::text[])
      as u(id, last_hour, state, reason, verdict, samples, detected, detector, explanation)
    where st.stat_id = u.id`
}
