// What a protocol request (line protocol, remote write) may cost before any of its points is built:
// an 8 MB body of a million lines once took half a gigabyte and 14 s of one event loop before the
// plan's daily allowance refused it, and four at once left every other account waiting that long. The body's
// lines or samples are counted first (cheap, no objects): more than the account has left today is the 403 the
// write would end in, more than MAX_POINTS_PER_REQUEST is a 413 naming the cap. What passes is parsed in
// chunks that yield to the event loop between them.
import type { Account } from '../../accounts/repo.js'
import { tooLarge } from '../../errors.js'
import { planOf } from '../../plans.js'
import { dailyPointLimit } from '../ingest.js'
import type { Limits } from '../limits.js'

/**
 * Points one protocol request may carry. Telegraf sends 1,000 a batch, Prometheus 2,000 (max_samples_per_send),
 * the InfluxDB clients 5,000; 100,000 points hold some 50 MB while they are parsed and queued. Telegraf answers a
 * 413 by splitting its batch.
 */
export const MAX_POINTS_PER_REQUEST = 100_000

/** Lines or samples handled between two yields to the event loop (about a millisecond's work). */
export const CHUNK = 2_000

/** Lets every other request waiting on this process run before the next chunk. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Refuses a request of at least `points` points (`count` of `what`, as the sender counts them) before they are
 * built: past the plan's allowance left today (403, as the write itself would answer) or past the per-request
 * cap (413). The allowance of a body of one chunk or less is left to the write, which decides it exactly
 * anyway (no Redis round trip for the common small batch).
 */
export async function admitProtocolRequest(limits: Limits, account: Account, points: number, count: number, what: string): Promise<void> {
  // The allowance first: a request the day cannot take in any case is told so, not to split itself.
  const plan = planOf(account.plan)
  if (points > CHUNK && points > plan.pointsPerDay - (await limits.pointsUsedToday(account.id))) throw dailyPointLimit(plan)
  if (count > MAX_POINTS_PER_REQUEST || points > MAX_POINTS_PER_REQUEST) throw tooManyPoints(count, what)
}

/** The 413 of a request over MAX_POINTS_PER_REQUEST: `count` of `what` (lines, samples, points). */
export function tooManyPoints(count: number | undefined, what: string) {
  const held =
    count === undefined ? `more than ${MAX_POINTS_PER_REQUEST.toLocaleString('en-US')} points` : `${count.toLocaleString('en-US')} ${what}`
  return tooLarge(
    `request too large: ${held}; at most ${MAX_POINTS_PER_REQUEST.toLocaleString('en-US')} points per request; send fewer per request`,
  )
}
