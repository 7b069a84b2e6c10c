// "Did you mean": the account's stat name closest to one that does not exist,
// for warnings where a typo would otherwise go unnoticed (alerts on a stat
// that has no data yet).
import Fuse from 'fuse.js'
import type { Db } from '../db.js'

/** The closest existing stat name, or null when none is reasonably close (or the account has none). */
export async function closestStatName(sql: Db, accountId: string, name: string): Promise<string | null> {
  const rows = await sql<
    { name: string }[]
  >`select name from stats where account_id = ${accountId} and parent_id is null order by name limit 5000`
  if (!rows.length) return null
  // Scores run 0 (exact) to 1; 0.4 keeps one- or two-letter typos and drops unrelated names.
  const fuse = new Fuse(
    rows.map((r) => r.name),
    { includeScore: true, threshold: 0.4, ignoreLocation: true },
  )
  const [best] = fuse.search(name, { limit: 1 })
  return best ? best.item : null
}
