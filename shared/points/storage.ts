// Which storage path a database uses (docs/decisions.md §D-6): plain PostgreSQL
// (rollup tables fed from rollup_pending) or TimescaleDB (0003_timescale.timescale.sql:
// points is a hypertable and rollups_1m/1h/1d are real-time continuous aggregates).
// Asked once per Sql instance; on plain PostgreSQL the query names no TimescaleDB
// object, so it works on both.
import type { Db } from '../db.js'

const known = new WeakMap<object, Promise<boolean>>()

/** True when rollups_1m is a continuous aggregate (a view) rather than the plain path's table. */
export function usesTimescale(sql: Db): Promise<boolean> {
  let answer = known.get(sql)
  if (!answer) {
    answer = Promise.resolve(
      sql<{ timescale: boolean }[]>`
        select coalesce((select relkind = 'v' from pg_class where oid = to_regclass('rollups_1m')), false) as timescale`,
    ).then(([r]) => r.timescale)
    known.set(sql, answer)
    answer.catch(() => known.delete(sql)) // a failed look-up (database down) is asked again next time
  }
  return answer
}
