// The one way a protocol adapter stores its points: through Ingest.writeMany, all or nothing, so names,
// quotas, the plan's stat count, idempotency and the queue are exactly those of /ez and /api/v1/points.
import type { Account } from '../../accounts/repo.js'
import { AppError } from '../../errors.js'
import type { Ingest } from '../ingest.js'
import type { ValidPoint } from '../point.js'

/**
 * Writes `points` as one all-or-nothing batch. A kind conflict (a gauge sent to a counter stat) is reported
 * by `where(index)` (a line number, a series) rather than by the point's index in the batch.
 */
export async function writeProtocolPoints(
  ingest: Ingest,
  account: Account,
  points: ValidPoint[],
  nowSeconds: number,
  where: (index: number) => string,
): Promise<number> {
  if (!points.length) return 0
  try {
    const outcome = await ingest.writeMany(account, points, 'all', nowSeconds, 'points')
    return outcome.accepted
  } catch (err) {
    const first =
      err instanceof AppError && err.code === 'kind_conflict'
        ? (err.extra.errors as Array<{ index: number; detail: string }> | undefined)?.[0]
        : undefined
    if (first) throw new AppError('invalid', 'kind_conflict', `${where(first.index)}: ${first.detail}`)
    throw err
  }
}
