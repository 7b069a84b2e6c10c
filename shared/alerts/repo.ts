// Alert rows and their deliveries.
import { parseFilter } from '../ingest/tags.js'
import type { Db, Sql } from '../db.js'
import type { Sensitivity } from '../anomalies/detector.js'
import { randomToken } from '../auth/secrets.js'
import { ALERT_ALLOWANCES_JSON } from '../plans.js'
import type { Aggregation, CreateAlertBody, OnNoData } from './schema.js'

export interface AlertRow {
  id: string
  account_id: string
  stat_name: string
  condition_type: CreateAlertBody['condition_type']
  threshold: number
  window_minutes: number
  aggregation: Aggregation
  direction: 'above' | 'below'
  channel: CreateAlertBody['channel']
  channel_config: CreateAlertBody['channel_config']
  cooldown_minutes: number
  signing_secret: string
  state: 'ok' | 'firing' | 'pending_confirmation'
  last_value: number | null
  last_evaluated_at: Date | null
  last_delivery_error: string | null
  last_delivery_failed_at: Date | null
  created_at: Date
  muted_until: Date | null
  on_no_data: OnNoData
  /** anomaly alerts: the least peak (in spreads) of the incidents it fires on; null: the stat's own sensitivity. */
  anomaly_sensitivity: Sensitivity | null
  /** window_minutes was given (at creation or by a change): it is then also the on_no_data silence, else 60 minutes. */
  window_minutes_set: boolean
  /** docs/decisions.md §24: the tags a judged series must hold, and the tag whose values are judged one by one. */
  filter: Record<string, string> | null
  group_by: string | null
  /** Set by listAlerts: beyond the plan's alert count after a downgrade (see pausedAlertIds). */
  paused?: boolean
}

/**
 * Alerts beyond their account's plan allowance, the newest ones: after a downgrade they are paused (listed,
 * not evaluated) until the plan allows them again (an upgrade, or older alerts deleted). Nothing is deleted.
 * Computed at each read from the current plan, so a plan change takes effect at the next evaluation pass.
 */
export function pausedAlertIds(sql: Db) {
  return sql`
    select r.id from (
      select a.id, acc.plan, row_number() over (partition by a.account_id order by a.created_at, a.id) as n
      from alerts a join accounts acc on acc.id = a.account_id) r
    -- ::text first: a parameter cast straight to jsonb would be sent as a JSON string.
    where r.n > (${ALERT_ALLOWANCES_JSON}::text::jsonb ->> r.plan)::int`
}

/**
 * Inserts an alert unless the account already holds `limit` of them; the
 * per-account advisory lock keeps two concurrent creations from both taking the last place.
 */
export async function insertAlert(
  sql: Sql,
  accountId: string,
  body: CreateAlertBody,
  state: 'ok' | 'pending_confirmation',
  limit: number,
): Promise<AlertRow | null> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${accountId}, 11))`
    const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from alerts where account_id = ${accountId}`
    if (n >= limit) return null
    const [row] = await tx<AlertRow[]>`
      insert into alerts (account_id, stat_name, condition_type, threshold, window_minutes, direction, channel, channel_config, cooldown_minutes, signing_secret, state, on_no_data, window_minutes_set, aggregation, filter, group_by, anomaly_sensitivity)
      values (${accountId}, ${body.stat_name}, ${body.condition_type}, ${body.threshold ?? 0}, ${body.window_minutes ?? DEFAULT_WINDOW_MINUTES}, ${body.direction}, ${body.channel},
              ${tx.json(body.channel_config)}, ${body.cooldown_minutes}, ${`whsec_${randomToken(24)}`}, ${state}, ${body.on_no_data ?? 'keep'}, ${body.window_minutes !== undefined}, ${body.aggregation ?? 'avg'},
              ${filterOf(body.filter)}::text::jsonb, ${body.group_by ?? null}, ${body.anomaly_sensitivity ?? null})
      returning *`
    return row
  }) as Promise<AlertRow | null>
}

export async function listAlerts(sql: Db, accountId: string): Promise<AlertRow[]> {
  return sql<AlertRow[]>`
    select a.*, row_number() over (order by a.created_at, a.id) > (${ALERT_ALLOWANCES_JSON}::text::jsonb ->> acc.plan)::int as paused
    from alerts a join accounts acc on acc.id = a.account_id
    where a.account_id = ${accountId} order by a.created_at, a.id`
}

export async function findAlert(sql: Db, id: string): Promise<AlertRow | null> {
  const [row] = await sql<AlertRow[]>`select * from alerts where id = ${id}`
  return row ?? null
}

/** Deletes an alert with its deliveries; returns the ids of deliveries that were still queued (their jobs are to be dropped). */
export async function deleteAlert(sql: Db, accountId: string, id: string): Promise<string[] | null> {
  const rows = await sql<{ id: string; queued: string[] }[]>`
    with gone as (delete from alerts where id = ${id} and account_id = ${accountId} returning id)
    select g.id, coalesce((select array_agg(d.id) from alert_deliveries d where d.alert_id = g.id and d.status = 'queued'), '{}') as queued
    from gone g`
  return rows.length ? rows[0].queued : null
}

export const DEFAULT_WINDOW_MINUTES = 5
/** How long a silence lasts before on_no_data acts (docs/decisions.md §18): window_minutes when given, else 60. */
export const DEFAULT_NO_DATA_MINUTES = 60
export const noDataMinutes = (a: Pick<AlertRow, 'window_minutes' | 'window_minutes_set'>) =>
  a.window_minutes_set ? a.window_minutes : DEFAULT_NO_DATA_MINUTES

/** The public JSON form of an alert (never the signing secret). */
export function alertJson(a: AlertRow) {
  return {
    id: a.id,
    stat_name: a.stat_name,
    condition_type: a.condition_type,
    threshold: a.threshold,
    window_minutes: a.window_minutes,
    aggregation: a.aggregation,
    direction: a.direction,
    channel: a.channel,
    channel_config: a.channel_config,
    cooldown_minutes: a.cooldown_minutes,
    state: a.state,
    last_value: a.last_value,
    last_evaluated_at: a.last_evaluated_at?.toISOString() ?? null,
    last_delivery_error: a.last_delivery_error,
    last_delivery_failed_at: a.last_delivery_failed_at?.toISOString() ?? null,
    created_at: a.created_at.toISOString(),
    no_data_minutes: noDataMinutes(a),
    muted_until: a.muted_until?.toISOString() ?? null,
    on_no_data: a.on_no_data,
    anomaly_sensitivity: a.anomaly_sensitivity,
    paused: a.paused ?? false,
    filter: a.filter ?? null,
    group_by: a.group_by ?? null,
  }
}

/** An alert's `filter=` as the jsonb text stored (null: none). */
function filterOf(raw: string | undefined): string | null {
  const f = parseFilter(raw)
  return f.ok && f.value ? JSON.stringify(f.value) : null
}

/** An alert per group's groups with their states (docs/decisions.md §24), by tags. */
export async function alertGroups(sql: Db, alertId: string) {
  const rows = await sql<
    { tags: Record<string, string>; state: 'ok' | 'firing'; last_value: number | null; last_evaluated_at: Date | null }[]
  >`
    select tags, state, last_value, last_evaluated_at from alert_groups where alert_id = ${alertId} order by tags::text`
  return rows.map((r) => ({
    tags: r.tags,
    state: r.state,
    last_value: r.last_value,
    last_evaluated_at: r.last_evaluated_at?.toISOString() ?? null,
  }))
}

export interface Delivery {
  id: string
  alert_id: string
  event: 'fired' | 'resolved' | 'test'
  payload: Record<string, unknown>
  status: 'queued' | 'delivered' | 'failed'
  attempts: number
}

export async function findDelivery(sql: Db, id: string): Promise<Delivery | null> {
  const [row] = await sql<Delivery[]>`select id, alert_id, event, payload, status, attempts from alert_deliveries where id = ${id}`
  return row ?? null
}

/** Marks a delivery sent and records the attempt with the receiver's status code (null for e-mail). */
export async function markDelivered(sql: Db, id: string, statusCode: number | null = null): Promise<void> {
  await sql`
    with d as (update alert_deliveries set status = 'delivered', delivered_at = now(), attempts = attempts + 1, last_error = null where id = ${id} returning id, attempts)
    insert into alert_delivery_attempts (delivery_id, attempt, status_code) select id, attempts, ${statusCode} from d
    on conflict do nothing`
}

/** Records a failed attempt; `final` marks the delivery failed for good and shows the error on the alert. */
export async function recordAttemptFailure(
  sql: Sql,
  id: string,
  error: string,
  final: boolean,
  statusCode: number | null = null,
): Promise<void> {
  await sql.begin(async (tx) => {
    const [d] = await tx<{ alert_id: string; attempts: number }[]>`
      update alert_deliveries set attempts = attempts + 1, last_error = ${error}, status = ${final ? 'failed' : 'queued'} where id = ${id} returning alert_id, attempts`
    if (!d) return
    await tx`insert into alert_delivery_attempts (delivery_id, attempt, status_code, error) values (${id}, ${d.attempts}, ${statusCode}, ${error}) on conflict do nothing`
    if (final) await tx`update alerts set last_delivery_error = ${error}, last_delivery_failed_at = now() where id = ${d.alert_id}`
  })
}

export interface DeliveryRow {
  id: string
  event: 'fired' | 'resolved' | 'test'
  status: 'queued' | 'delivered' | 'failed'
  attempts: number
  last_error: string | null
  observed_value: number | null
  created_at: Date
  delivered_at: Date | null
}

/** The alert's most recent deliveries, newest first; null when the account holds no such alert. */
export async function listDeliveries(sql: Db, accountId: string, alertId: string, limit: number): Promise<DeliveryRow[] | null> {
  const [alert] = await sql`select 1 from alerts where id = ${alertId} and account_id = ${accountId}`
  if (!alert) return null
  return sql<DeliveryRow[]>`
    select id, event, status, attempts, last_error, (payload->>'observed_value')::float8 as observed_value, created_at, delivered_at
    from alert_deliveries where alert_id = ${alertId} order by created_at desc limit ${limit}`
}

export function deliveryJson(d: DeliveryRow) {
  return {
    id: d.id,
    event: d.event,
    status: d.status,
    attempts: d.attempts,
    last_error: d.last_error,
    observed_value: d.observed_value,
    created_at: d.created_at.toISOString(),
    delivered_at: d.delivered_at?.toISOString() ?? null,
  }
}
