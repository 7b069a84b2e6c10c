// Deleting a stat touches two domains: its own rows (stats/repo.ts) and the dashboard cards that name it
// (dashboards/repo.ts). This caller does both in one transaction, so that neither repository imports the other's
// deletion (dashboards/repo.ts reads stats/repo.ts to check a card's names; stats/repo.ts imports no dashboards).
import type { Sql } from './db.js'
import { removeStatFromDashboards } from './dashboards/repo.js'
import { deleteStatRows, type Stat } from './stats/repo.js'

/**
 * Deletes a stat with its points, rollups, share token and idempotency records, and lets dashboard cards go of its
 * name, in one transaction; null when the account has no stat of that name. A later write creates a new stat.
 */
export async function deleteStat(sql: Sql, accountId: string, name: string): Promise<Stat | null> {
  return sql.begin(async (tx) => {
    const stat = await deleteStatRows(tx, accountId, name)
    if (stat) await removeStatFromDashboards(tx, accountId, stat.name)
    return stat
  }) as Promise<Stat | null>
}
