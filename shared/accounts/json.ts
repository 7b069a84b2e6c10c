// The account as the API and the CLI show it: kept apart from repo.ts, which holds the rows and their queries.
import type { Account } from './repo.js'

/** The public JSON form of an account. */
export function accountJson(a: Account) {
  return { id: a.id, email: a.email, plan: a.plan, created_at: a.createdAt.toISOString(), time_zone: a.timeZone }
}
