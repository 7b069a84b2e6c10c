// Each alert's history (docs/decisions.md §18): what happened (fired, resolved, suppressed, muted, test)
// and every attempt of its delivery with the receiver's answer.
import type { Db } from '../db.js'
import type { EventKind } from './mute-and-silence.js'

export interface NewEvent {
  alertId: string
  at: Date
  event: EventKind
  observedValue: number | null
  detail: string | null
  deliveryId: string | null
}

/** Appends events in one statement (an evaluation pass may record thousands). */
export async function recordEvents(sql: Db, events: NewEvent[]): Promise<void> {
  if (!events.length) return
  // Arrays go as text and are cast in SQL: postgres.js cannot infer array types from nulls.
  await sql`
    insert into alert_events (alert_id, at, event, observed_value, detail, delivery_id)
    select alert_id::uuid, at::timestamptz, event, observed_value::float8, detail, delivery_id
    from unnest(${events.map((e) => e.alertId)}::text[], ${events.map((e) => e.at.toISOString())}::text[], ${events.map((e) => e.event)}::text[],
                ${events.map((e) => (e.observedValue === null ? null : String(e.observedValue)))}::text[], ${events.map((e) => e.detail)}::text[],
                ${events.map((e) => e.deliveryId)}::text[]) as u(alert_id, at, event, observed_value, detail, delivery_id)`
}

interface EventRow {
  at: Date
  event: EventKind
  observed_value: number | null
  detail: string | null
  delivery_status: 'queued' | 'delivered' | 'failed' | null
  attempts: Array<{ attempt: number; at: string; status_code: number | null; error: string | null }> | null
}

/** The alert's events, newest first, each with its delivery's attempts; null when the account holds no such alert. */
export async function listEvents(sql: Db, accountId: string, alertId: string, limit: number): Promise<EventRow[] | null> {
  const [alert] = await sql`select 1 from alerts where id = ${alertId} and account_id = ${accountId}`
  if (!alert) return null
  return sql<EventRow[]>`
    select e.at, e.event, e.observed_value, e.detail, d.status as delivery_status,
           (select json_agg(json_build_object('attempt', t.attempt, 'at', t.at, 'status_code', t.status_code, 'error', t.error) order by t.attempt)
            from alert_delivery_attempts t where t.delivery_id = e.delivery_id) as attempts
    from alert_events e left join alert_deliveries d on d.id = e.delivery_id
    where e.alert_id = ${alertId} order by e.at desc, e.id desc limit ${limit}`
}

export function eventJson(e: EventRow) {
  return {
    at: e.at.toISOString(),
    event: e.event,
    observed_value: e.observed_value,
    detail: e.detail,
    delivery_status: e.delivery_status,
    // json_build_object renders timestamptz in the session's format: normalised to ISO 8601 UTC here.
    deliveries: (e.attempts ?? []).map((a) => ({
      attempt: a.attempt,
      at: new Date(a.at).toISOString(),
      status_code: a.status_code,
      error: a.error,
    })),
  }
}
