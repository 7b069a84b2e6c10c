// One evaluation pass over every alert, set-based: one query reads each
// alert's observation, the state machine runs in memory, one statement writes
// the new states and one inserts the deliveries (the outbox), all in one
// transaction. An advisory lock keeps two passes from overlapping anywhere.
import type { Db, Sql, TxSql } from '../db.js'
import { SENSITIVITY_THRESHOLD } from '../anomalies/detector.js'
import { conditionHolds, step, type Rule } from './conditions.js'
import { recordEvents, type NewEvent } from './history.js'
import { applyMute, silenceVerdict, type Managed } from './mute-and-silence.js'
import { DEFAULT_NO_DATA_MINUTES, pausedAlertIds } from './repo.js'
import { percentileOf, type Aggregation, type Condition, type DeliveryPayload, type OnNoData } from './schema.js'
import { spanPercentiles } from '../stats/percentiles.js'
import { explanationInZone } from '../time/zones.js'
import type { Kind } from '../stats/repo.js'
import { tagsCell } from '../ingest/tags.js'

const LOCK_ID = 72_410_002

interface Row {
  id: string
  stat_name: string
  condition_type: Condition
  threshold: number
  window_minutes: number
  aggregation: Aggregation
  stat_id: string | null
  /** The stat's series (its own row and its tagged series, docs/decisions.md §24): the alert judges them as one. */
  series_ids: string[] | null
  stat_kind: Kind | null
  direction: 'above' | 'below'
  cooldown_minutes: number
  state: 'ok' | 'firing'
  incident_id: string | null
  incident_notified: boolean
  last_notified_at: Date | null
  condition_since: Date | null
  value: number | null
  previous: number | null
  muted_until: Date | null
  incident_muted: boolean
  incident_no_data: boolean
  resolve_withheld: string | null
  silence_minutes: number
  on_no_data: OnNoData
  /** Seconds since the stat last received a point (by arrival), when on_no_data asks. */
  silent: number | null
  /** anomaly: whether the stat's latest incident since the alert was created is open, and its explanation (null: none). */
  anomaly_open: boolean | null
  anomaly_explanation: string | null
  /** anomaly: the account's time zone, which the explanation's times are written in (null: none set, UTC). */
  time_zone: string | null
  /** docs/decisions.md §24: the tags a judged series must hold, and the tag judged value by value. */
  filter: Record<string, string> | null
  group_by: string | null
  /** One group of an alert per group: its tags, and the stat's own name (stat_name then names the group). */
  group_tags?: Record<string, string>
  base_name?: string
}

export interface PassResult {
  evaluated: number
  deliveries: string[]
  skipped?: boolean
}

const describe: Record<Exclude<Condition, 'heartbeat' | 'missing_data'>, string> = {
  above: 'above',
  below: 'below',
  pct_change: 'changed by more than (%)',
  sustained: 'sustained beyond',
  anomaly: 'anomaly',
}

/**
 * A span of seconds as a person says it ("no data for more than (s) 120 (observed 340.246)"):
 * "45 s", "5 min 40 s", "2 min", "3 h 5 min", "2 d 4 h". Whole seconds; the two largest units only.
 */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  const units: Array<[number, string]> = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ]
  const i = units.findIndex(([size]) => s >= size)
  if (i < 0) return '0 s'
  const [big, bigName] = units[i]
  const first = `${Math.floor(s / big)} ${bigName}`
  if (i === units.length - 1) return first
  const [small, smallName] = units[i + 1]
  const rest = Math.floor((s % big) / small)
  return rest ? `${first} ${rest} ${smallName}` : first
}

/** An anomaly alert's message: the incident's own explanation in numbers, or its peak once it has closed. */
function anomalyMessage(r: Row, event: 'fired' | 'resolved', observed: string): string {
  const explained = r.anomaly_explanation === null ? null : explanationInZone(r.anomaly_explanation, r.time_zone)
  return event === 'fired'
    ? `${r.stat_name}: anomaly: ${explained ?? `observed ${observed}`}`
    : `${r.stat_name}: the anomaly is over (its peak was ${observed})`
}

/** heartbeat and missing_data: how long the stat has been silent, against the window ("no data for 5 min 40 s (limit 2 min)"). */
function silenceMessage(r: Row, event: 'fired' | 'resolved'): string {
  const limit = `limit ${duration(r.window_minutes * 60)}`
  if (r.value === null) return `${r.stat_name}: ${event === 'fired' ? 'no data' : 'data is back'} (${limit})`
  return event === 'fired'
    ? `${r.stat_name}: no data for ${duration(r.value)} (${limit})`
    : `${r.stat_name}: data is back, the last point arrived ${duration(r.value)} ago (${limit})`
}

/** `noData`: the event comes of the stat's silence (on_no_data), or ends an incident silence opened. */
function payload(r: Row, event: 'fired' | 'resolved', incidentId: string, now: Date, noData = false): DeliveryPayload {
  const observed = r.value === null ? 'no data' : String(Math.round(r.value * 1000) / 1000)
  // A percentile alert says which value it compared: "api.latency: p95 over 5 min above 500 (observed 612)".
  const what = r.aggregation === 'avg' ? '' : `${r.aggregation} over ${r.window_minutes} min `
  const silence = `no data for more than ${duration(r.silence_minutes * 60)}`
  return {
    alert_id: r.id,
    event,
    status: event === 'fired' ? 'firing' : 'resolved',
    stat_name: r.base_name ?? r.stat_name,
    observed_value: r.value,
    condition: r.condition_type,
    threshold: r.threshold,
    triggered_at: now.toISOString(),
    message:
      r.condition_type === 'anomaly'
        ? anomalyMessage(r, event, observed)
        : r.condition_type === 'heartbeat' || r.condition_type === 'missing_data'
          ? silenceMessage(r, event)
          : event === 'fired'
            ? noData
              ? `${r.stat_name}: ${silence}`
              : `${r.stat_name}: ${what}${describe[r.condition_type]} ${r.threshold} (observed ${observed})`
            : noData && r.on_no_data === 'resolve'
              ? `${r.stat_name}: resolved, ${silence}`
              : noData
                ? `${r.stat_name}: data is back (observed ${observed})`
                : `${r.stat_name}: recovered, ${what}no longer ${describe[r.condition_type]} ${r.threshold} (observed ${observed})`,
    // Also the BullMQ job id, which may not contain ':'.
    idempotency_key: `${r.id}.${incidentId}.${event}`,
    // A group's incident is its own: the key names the group (docs/decisions.md §24).
    incident_key: r.group_tags ? `${r.id}.${tagsCell(r.group_tags)}.${incidentId}` : `${r.id}.${incidentId}`,
    ...(r.group_tags ? { tags: r.group_tags } : {}),
  }
}

type Outbox = { id: string; alertId: string; incidentId: string; event: string; payload: DeliveryPayload }

/**
 * One alert's evaluation: the state machine of docs/decisions.md §I-3.2 on its value (or on its silence, per on_no_data),
 * then the mute; what to store, deliver and record in its history.
 */
function decide(r: Row, now: Date): { next: Managed; noData: boolean; outbox: Outbox[]; events: NewEvent[] } {
  const rule: Rule = {
    condition: r.condition_type,
    threshold: r.threshold,
    windowMinutes: r.window_minutes,
    direction: r.direction,
    cooldownMinutes: r.cooldown_minutes,
  }
  const current: Managed = {
    state: r.state,
    incidentId: r.incident_id,
    incidentNotified: r.incident_notified,
    lastNotifiedAt: r.last_notified_at,
    conditionSince: r.condition_since,
    incidentMuted: r.incident_muted,
    resolveWithheld: r.resolve_withheld,
  }
  const silence = silenceVerdict(rule, r.on_no_data, r.silent, r.silence_minutes)
  // Silence is judged on its own: it has lasted the window already, so `sustained` need not wait it out again.
  const s =
    silence === undefined
      ? step(rule, current, conditionHolds(rule, { value: r.value, previous: r.previous, open: r.anomaly_open }), now)
      : step({ ...rule, condition: 'above' }, current, silence, now)
  const o = applyMute(current, s, r.muted_until, now)
  const opened = current.state === 'ok' && o.next.state === 'firing'
  const outbox: Outbox[] = []
  const events: NewEvent[] = []
  if (o.releasedResolve) {
    // The resolve a mute withheld, first: the receiver closes that incident before hearing of any new one.
    const p = payload(r, 'resolved', o.releasedResolve, now)
    outbox.push({ id: p.idempotency_key, alertId: r.id, incidentId: o.releasedResolve, event: 'resolved', payload: p })
    events.push({
      alertId: r.id,
      at: now,
      event: 'resolved',
      observedValue: r.value,
      detail: 'withheld by a mute, delivered when it ended',
      deliveryId: p.idempotency_key,
    })
  }
  let deliveryId: string | null = null
  if (o.deliver) {
    const incidentId = o.deliver === 'fired' ? o.next.incidentId! : r.incident_id!
    const p = payload(
      r,
      o.deliver,
      incidentId,
      now,
      o.deliver === 'fired' ? (opened ? silence === true : r.incident_no_data) : r.incident_no_data || silence === false,
    )
    outbox.push({ id: p.idempotency_key, alertId: r.id, incidentId, event: o.deliver, payload: p })
    deliveryId = p.idempotency_key
  }
  if (o.record) events.push({ alertId: r.id, at: now, event: o.record.event, observedValue: r.value, detail: o.record.detail, deliveryId })
  return { next: o.next, noData: o.next.state === 'firing' && (opened ? silence === true : r.incident_no_data), outbox, events }
}

/**
 * The value of each percentile alert: its gauge's percentile over [now - window_minutes, now), read like a chart
 * bucket of that length (exact under an hour; sketches merged with the raw points of the partial and unsketched
 * hours beyond). One read per alert, few at a time: percentile alerts are few, and each read is a few index
 * range scans. A stat that is (or became) a counter, or has no point in the window, has no value: the alert
 * stays as it is, like a gauge without a recent reading.
 */
async function readPercentileValues(sql: Db, rows: Row[], now: Date): Promise<void> {
  const todo = rows.filter((r) => r.aggregation !== 'avg' && r.condition_type !== 'anomaly')
  for (const r of todo) r.value = null
  const gauges = todo.filter((r) => r.stat_id !== null && r.stat_kind === 'gauge')
  const from = (r: Row) => new Date(now.getTime() - r.window_minutes * 60_000)
  for (let i = 0; i < gauges.length; i += 8) {
    await Promise.all(
      gauges.slice(i, i + 8).map(async (r) => {
        const p = r.aggregation as Exclude<Aggregation, 'avg'>
        r.value = (await spanPercentiles(sql, r.series_ids ?? r.stat_id!, from(r), now, [{ key: p, q: percentileOf(p) }]))?.[0] ?? null
      }),
    )
  }
}

/**
 * Each confirmed, unpaused alert with what it is judged on at `now`: its stat's value (or silence, or anomaly
 * incident), its state, and the settings the state machine and the mute need. Locks the alerts' rows.
 */
async function readObservations(tx: TxSql, now: Date): Promise<Row[]> {
  // The value of the last minute, read from the points themselves (index on stat_id, ts) so that a
  // breach is seen within one evaluation interval: counters summed, gauges averaged. The minute is
  // [now - 60 s, now), half-open like a 1 m rollup bucket, so a pass at a minute's end sees exactly
  // that bucket (the threshold back-test, shared/analytics/thresholds.ts, replays those buckets).
  // Each lateral tests the condition type first, so it only scans for the alerts that need it.
  return tx<Row[]>`
    select a.id, a.stat_name, a.condition_type, a.threshold, a.window_minutes, a.aggregation, s.id as stat_id, s.kind as stat_kind, a.direction, a.cooldown_minutes,
           ser.ids as series_ids, a.filter, a.group_by,
           a.state, a.incident_id, a.incident_notified, a.last_notified_at, a.condition_since,
           case when a.condition_type in ('heartbeat', 'missing_data')
                then extract(epoch from ${now}::timestamptz - coalesce(last.ts, a.created_at))::float8
                when a.condition_type = 'anomaly' then inc.observed
                else cur.v end as value, inc.open as anomaly_open, inc.explanation as anomaly_explanation,
           case when a.condition_type = 'anomaly' then (select acc.time_zone from accounts acc where acc.id = a.account_id) end as time_zone,
           prev.v as previous, a.muted_until, a.incident_muted, a.incident_no_data, a.resolve_withheld, a.on_no_data,
           case when a.window_minutes_set then a.window_minutes else ${DEFAULT_NO_DATA_MINUTES} end as silence_minutes,
           extract(epoch from ${now}::timestamptz - greatest(arr.at, a.created_at))::float8 as silent
    from alerts a
    left join stats s on s.account_id = a.account_id and s.name = a.stat_name and s.parent_id is null
    -- The stat as a whole: its own row and its tagged series (docs/decisions.md §24).
    -- With a filter: the tagged series holding its every pair.
    left join lateral (select array_agg(x.id)::text[] as ids from stats x
      where (x.id = s.id and a.filter is null) or (x.parent_id = s.id and (a.filter is null or x.tags @> a.filter))) ser on s.id is not null
    left join lateral (
      select case when s.kind = 'counter' then coalesce(sum(p.value), 0) else avg(p.value) end as v
      -- Hot rows and blocks alike (stat_points) of every series the alert reads: a late evaluation's window may reach past the hot edge.
      from unnest(ser.ids::uuid[]) as sid(id), lateral stat_points(sid.id, ${now}::timestamptz - interval '60 seconds', ${now}) p
      where a.condition_type not in ('heartbeat', 'missing_data', 'anomaly') and a.aggregation = 'avg'
    ) cur on s.id is not null
    left join lateral (
      select case when s.kind = 'counter' then coalesce(sum(p.value), 0) else avg(p.value) end as v
      -- Up to a week back (window_minutes): past the hot days, so hot rows and day blocks alike (sql/0027).
      from unnest(ser.ids::uuid[]) as sid(id), lateral stat_points(sid.id, ${now}::timestamptz - make_interval(mins => a.window_minutes) - interval '60 seconds',
        ${now}::timestamptz - make_interval(mins => a.window_minutes)) p
      where a.condition_type = 'pct_change'
    ) prev on s.id is not null
    left join lateral (
      -- Hot rows and day blocks alike (sql/0027): a stat silent for days has its last point in a block.
      select max(stat_newest(sid.id, '-infinity', 'infinity')) as ts from unnest(ser.ids::uuid[]) as sid(id) where a.condition_type in ('heartbeat', 'missing_data')
    ) last on s.id is not null
    -- anomaly: the stat's latest incident recorded after the alert was created (while open it fires the alert;
    -- its close resolves it). observed_value is the incident's peak (docs/decisions.md §16).
    left join lateral (
      select (an.peak ->> 'observed')::float8 as observed, an.status = 'open' as open, an.explanation
      from anomalies an where a.condition_type = 'anomaly' and an.stat_id = s.id and an.opened_at >= a.created_at
        -- An alert with its own sensitivity fires on the incidents whose peak is that far out (docs/decisions.md §16).
        and (a.anomaly_sensitivity is null or abs((an.peak ->> 'score')::float8) >= case a.anomaly_sensitivity
          when 'low' then ${SENSITIVITY_THRESHOLD.low}::float8 when 'high' then ${SENSITIVITY_THRESHOLD.high}::float8
          else ${SENSITIVITY_THRESHOLD.normal}::float8 end)
      order by an.started_at desc limit 1
    ) inc on s.id is not null
    -- Arrival, not the points' own t (a backfill is data arriving): the refresh job stamps each stat that
    -- took points, and points it has not folded yet are arriving now.
    left join lateral (
      select greatest((select max(rs.refreshed_at) from rollup_state rs where rs.stat_id = any(ser.ids::uuid[])),
                      (select ${now}::timestamptz from rollup_pending rp where rp.stat_id = any(ser.ids::uuid[]) limit 1)) as at
      where a.on_no_data <> 'keep'
    ) arr on true
    where a.state in ('ok', 'firing') and a.id not in (${pausedAlertIds(tx)})
    order by a.id
    for update of a`
}

/** Stores each alert's new state, and the value it was judged on, in one statement. */
async function writeStates(tx: TxSql, rows: Row[], next: Managed[], noData: boolean[], now: Date): Promise<void> {
  // Every array goes as text and is cast in SQL: postgres.js cannot infer array types from nulls or booleans.
  const iso = (d: Date | null) => d?.toISOString() ?? null
  await tx`
    update alerts a set state = u.state, incident_id = u.incident_id::uuid, incident_notified = u.notified::bool,
      last_notified_at = u.notified_at::timestamptz, condition_since = u.since::timestamptz, last_value = u.value::float8, last_evaluated_at = ${now},
      incident_muted = u.muted::bool, incident_no_data = u.no_data::bool, resolve_withheld = u.withheld::uuid
    from unnest(${rows.map((r) => r.id)}::text[], ${next.map((n) => n.state)}::text[], ${next.map((n) => n.incidentId)}::text[],
                ${next.map((n) => String(n.incidentNotified))}::text[], ${next.map((n) => iso(n.lastNotifiedAt))}::text[],
                ${next.map((n) => iso(n.conditionSince))}::text[], ${rows.map((r) => (r.value === null ? null : String(r.value)))}::text[],
                ${next.map((n) => String(n.incidentMuted))}::text[], ${noData.map(String)}::text[], ${next.map((n) => n.resolveWithheld)}::text[])
      as u(id, state, incident_id, notified, notified_at, since, value, muted, no_data, withheld)
    where a.id = u.id::uuid`
}

/** Puts the pass's deliveries in the outbox (alert_deliveries); one queued twice is stored once. */
async function insertOutbox(tx: TxSql, outbox: Outbox[]): Promise<void> {
  if (!outbox.length) return
  await tx`
    insert into alert_deliveries (id, alert_id, incident_id, event, payload)
    select id, alert_id::uuid, incident_id::uuid, event, payload::jsonb
    from unnest(${outbox.map((o) => o.id)}::text[], ${outbox.map((o) => o.alertId)}::text[], ${outbox.map((o) => o.incidentId)}::text[],
                ${outbox.map((o) => o.event)}::text[], ${outbox.map((o) => JSON.stringify(o.payload))}::text[]) as u(id, alert_id, incident_id, event, payload)
    on conflict (id) do nothing`
}

/** Evaluates every confirmed alert at `now`; returns the ids of the deliveries it queued in the outbox. */
export async function evaluateAlerts(sql: Sql, now: Date): Promise<PassResult> {
  return sql.begin(async (tx) => {
    const [{ locked }] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${LOCK_ID}) as locked`
    if (!locked) return { evaluated: 0, deliveries: [], skipped: true }
    // JIT compilation of this query costs more than it saves (measured: about half of a 10,000-alert pass).
    await tx`set local jit = off`
    const all = await readObservations(tx, now)
    if (!all.length) return { evaluated: 0, deliveries: [] }
    const rows = all.filter((r) => r.group_by === null)
    const grouped = all.filter((r) => r.group_by !== null)
    await readPercentileValues(tx, rows, now)

    const next: Managed[] = []
    const noData: boolean[] = []
    const outbox: Outbox[] = []
    const events: NewEvent[] = []
    if (grouped.length) await evaluateGroups(tx, grouped, now, outbox, events)
    for (const r of rows) {
      const d = decide(r, now)
      next.push(d.next)
      noData.push(d.noData)
      outbox.push(...d.outbox)
      events.push(...d.events)
    }
    await writeStates(tx, rows, next, noData, now)
    await insertOutbox(tx, outbox)
    await recordEvents(tx, events)
    return { evaluated: all.length, deliveries: outbox.map((o) => o.id) }
  }) as Promise<PassResult>
}

interface GroupState {
  alert_id: string
  value: string
  state: 'ok' | 'firing'
  incident_id: string | null
  incident_notified: boolean
  last_notified_at: Date | null
  condition_since: Date | null
  incident_muted: boolean
  resolve_withheld: string | null
}

/**
 * Alerts per group (docs/decisions.md §24): each value of the alert's group_by tag, among the series its filter
 * keeps, is judged on the last minute (a counter's sum, a gauge's average) by its own state machine, kept in
 * alert_groups; a group fires and resolves on its own, its payload carries its tags. A group without a reading
 * this minute stays as it is. The alert itself reads firing while any group fires.
 */
async function evaluateGroups(tx: TxSql, alerts: Row[], now: Date, outbox: Outbox[], events: NewEvent[]): Promise<void> {
  const ids = alerts.map((a) => a.id)
  const [values, states] = await Promise.all([
    tx<{ alert_id: string; value: string; v: number | null }[]>`
      select a.id as alert_id, x.tags ->> a.group_by as value,
             case when min(x.kind) = 'counter' then coalesce(sum(p.value), 0) else avg(p.value) end as v
      from alerts a
      join stats s on s.account_id = a.account_id and s.name = a.stat_name and s.parent_id is null
      join stats x on x.parent_id = s.id and x.tags ? a.group_by and (a.filter is null or x.tags @> a.filter)
      left join points p on p.stat_id = x.id and p.ts >= ${now}::timestamptz - interval '60 seconds' and p.ts < ${now}
      where a.id = any(${ids}::uuid[])
      group by 1, 2`,
    tx<GroupState[]>`
      select g.alert_id, g.tags ->> a.group_by as value, g.state, g.incident_id, g.incident_notified, g.last_notified_at,
             g.condition_since, g.incident_muted, g.resolve_withheld
      from alert_groups g join alerts a on a.id = g.alert_id where g.alert_id = any(${ids}::uuid[])`,
  ])
  const valueByKey = new Map(values.map((v) => [`${v.alert_id}\n${v.value}`, v.v]))
  const stateOf = new Map(states.map((g) => [`${g.alert_id}\n${g.value}`, g]))
  const written: Array<{ alertId: string; tags: Record<string, string>; next: Managed; value: number | null }> = []
  for (const r of alerts) {
    const keys = new Set([...values, ...states].filter((g) => g.alert_id === r.id).map((g) => g.value))
    for (const value of keys) {
      const key = `${r.id}\n${value}`
      const st = stateOf.get(key)
      const tags = { [r.group_by!]: value }
      const g: Row = {
        ...r,
        stat_name: `${r.stat_name}{${tagsCell(tags)}}`,
        base_name: r.stat_name,
        group_tags: tags,
        value: valueByKey.get(key) ?? null,
        previous: null,
        silent: null,
        state: st?.state ?? 'ok',
        incident_id: st?.incident_id ?? null,
        incident_notified: st?.incident_notified ?? false,
        last_notified_at: st?.last_notified_at ?? null,
        condition_since: st?.condition_since ?? null,
        incident_muted: st?.incident_muted ?? false,
        incident_no_data: false,
        resolve_withheld: st?.resolve_withheld ?? null,
      }
      const d = decide(g, now)
      outbox.push(...d.outbox)
      events.push(...d.events)
      written.push({ alertId: r.id, tags, next: d.next, value: g.value })
    }
  }
  const iso = (d: Date | null) => d?.toISOString() ?? null
  if (written.length)
    await tx`
      insert into alert_groups as g (alert_id, tags, state, incident_id, incident_notified, last_notified_at, condition_since,
                                     incident_muted, resolve_withheld, last_value, last_evaluated_at)
      select u.alert_id::uuid, u.tags::jsonb, u.state, u.incident_id::uuid, u.notified::bool, u.notified_at::timestamptz,
             u.since::timestamptz, u.muted::bool, u.withheld::uuid, u.value::float8, ${now}
      from unnest(${written.map((w) => w.alertId)}::text[], ${written.map((w) => JSON.stringify(w.tags))}::text[],
                  ${written.map((w) => w.next.state)}::text[], ${written.map((w) => w.next.incidentId)}::text[],
                  ${written.map((w) => String(w.next.incidentNotified))}::text[], ${written.map((w) => iso(w.next.lastNotifiedAt))}::text[],
                  ${written.map((w) => iso(w.next.conditionSince))}::text[], ${written.map((w) => String(w.next.incidentMuted))}::text[],
                  ${written.map((w) => w.next.resolveWithheld)}::text[], ${written.map((w) => (w.value === null ? null : String(w.value)))}::text[])
        as u(alert_id, tags, state, incident_id, notified, notified_at, since, muted, withheld, value)
      on conflict (alert_id, tags) do update set state = excluded.state, incident_id = excluded.incident_id,
        incident_notified = excluded.incident_notified, last_notified_at = excluded.last_notified_at,
        condition_since = excluded.condition_since, incident_muted = excluded.incident_muted,
        resolve_withheld = excluded.resolve_withheld, last_value = coalesce(excluded.last_value, g.last_value),
        last_evaluated_at = excluded.last_evaluated_at`
  const firing = new Set(written.filter((w) => w.next.state === 'firing').map((w) => w.alertId))
  await tx`
    update alerts a set state = case when a.id = any(${[...firing]}::uuid[]) then 'firing' else 'ok' end, last_evaluated_at = ${now}
    where a.id = any(${ids}::uuid[])`
}

/** Deliveries still waiting to be sent (the outbox), for re-enqueueing after a crash between commit and enqueue. */
export async function queuedDeliveries(sql: Sql, olderThan: Date): Promise<string[]> {
  const rows = await sql<
    { id: string }[]
  >`select id from alert_deliveries where status = 'queued' and created_at < ${olderThan} order by created_at limit 1000`
  return rows.map((r) => r.id)
}
