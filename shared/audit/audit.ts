// The audit log (docs/decisions.md §23): one row per change, naming who (a person or an API key), when,
// from which client address, on what, and a before/after summary from which every secret is dropped.
import type { Db } from '../db.js'

export interface Actor {
  /** billing: the payment provider's state applied by the billing sync (its id is the provider's customer). */
  type: 'person' | 'key' | 'billing'
  id: string | null
  email?: string
}

export interface AuditEntry {
  accountId: string
  actor: Actor
  action: string
  target: string
  ip: string | null
  summary: Record<string, unknown>
}

/** Audit rows are kept this long, then the maintenance schedule deletes them. */
export const AUDIT_RETENTION_DAYS = 400

// A field whose name says it holds a credential never reaches a row, at any depth.
const SECRET_FIELD = /pass|secret|token|code|^key$|api_key|signing|authorization|cookie|routing_key|genie/i

/** A copy of `value` with every credential-like field replaced by "[redacted]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[…]'
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redact(v, depth + 1))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) ? '[redacted]' : redact(v, depth + 1)
    return out
  }
  if (typeof value === 'string' && value.length > 500) return `${value.slice(0, 500)}…`
  return value
}

export async function recordAudit(sql: Db, e: AuditEntry): Promise<void> {
  await sql`
    insert into audit_events (account_id, actor_type, actor_id, actor_email, action, target, ip, summary)
    values (${e.accountId}, ${e.actor.type}, ${e.actor.id}, ${e.actor.email ?? null}, ${e.action}, ${e.target}, ${e.ip},
            ${sql.json(redact(e.summary) as never)})`
}

export interface AuditEvent {
  id: string
  at: string
  actor: Actor
  action: string
  target: string
  ip: string | null
  summary: Record<string, unknown>
}

/** The account's events, newest first; the cursor is the last id seen. */
export async function listAudit(sql: Db, accountId: string, cursor: string | undefined, limit = 50) {
  const rows = await sql<
    {
      id: string
      at: Date
      actor_type: 'person' | 'key' | 'billing'
      actor_id: string
      actor_email: string | null
      action: string
      target: string
      ip: string | null
      summary: Record<string, unknown>
    }[]
  >`
    select id::text, at, actor_type, actor_id, actor_email, action, target, ip, summary from audit_events
    where account_id = ${accountId} ${cursor ? sql`and id < ${cursor}` : sql``}
    order by audit_events.id desc limit ${limit + 1}`
  const page = rows.slice(0, limit)
  const events: AuditEvent[] = page.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    actor: { type: r.actor_type, id: r.actor_id, ...(r.actor_email ? { email: r.actor_email } : {}) },
    action: r.action,
    target: r.target,
    ip: r.ip,
    summary: r.summary,
  }))
  return { events, next_cursor: rows.length > limit ? page[page.length - 1].id : null }
}

/** Deletes rows older than the retention (the maintenance schedule); returns how many. */
export async function purgeAudit(sql: Db, now: Date): Promise<number> {
  const res = await sql`delete from audit_events where at < ${now} - make_interval(days => ${AUDIT_RETENTION_DAYS})`
  return res.count
}
