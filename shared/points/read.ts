// A series' points in a time range, from wherever they are: hot rows (`points`), the compaction's blocks
// (a day's block and its small blocks of the hot edge's day), write blocks (sql/0032). The Node-side twin of
// SQL's stat_points() (sql/0027), which readers inside a statement use (the alert evaluator, percentiles,
// the dashboard); this one decodes in Node, for readers that stream many points (the export). Both return
// every point once, whichever side of the hot edge it is on and whether or not a compaction runs meanwhile:
// a compaction's rows-to-block move is one transaction, and a read of both sides is one snapshot.
import type { Db } from '../db.js'
import { type BlockColumns, decodeBlockPoints, mergePoints, type Points, pointsOfRows, type Row, rowsOfPoints } from './blocks.js'

const DAY_US = 86_400_000_000n

/**
 * The stat's points in [fromUs, toUs) (µs since the epoch), in time order (equal times: blocks first, then rows,
 * as the export has always given them). One statement, so one snapshot: a compaction moving rows into a block
 * between two reads would otherwise show its points twice (rows read first) or not at all (blocks read first).
 */
export async function seriesPoints(sql: Db, statId: string, fromUs: bigint, toUs: bigint): Promise<Row[]> {
  return rowsOfPoints(await seriesColumns(sql, statId, fromUs, toUs))
}

/** seriesPoints as columns, for readers of many points (the export). */
export async function seriesColumns(sql: Db, statId: string, fromUs: bigint, toUs: bigint): Promise<Points> {
  if (toUs <= fromUs) return pointsOfRows([])
  const at = (us: bigint) => sql`'epoch'::timestamptz + ${us.toString()}::int8 * interval '1 microsecond'`
  // A block's points all lie in its day: the first day that can hold `fromUs` starts at or before it.
  const fromDay = fromUs - (((fromUs % DAY_US) + DAY_US) % DAY_US)
  const all = await sql<Array<BlockColumns & { us: string | null; value: number | null }>>`
    select * from (
      select day, seq, dts, scale, ivals, fvals, null::int8 as us, null::float8 as value from point_blocks
      where stat_id = ${statId} and day >= ${at(fromDay)} and day < ${at(toUs)} and last_ts >= ${at(fromUs)} and first_ts < ${at(toUs)}
      union all
      select null, null, null, null, null, null, (extract(epoch from ts) * 1000000)::int8, value from points
      where stat_id = ${statId} and ts >= ${at(fromUs)} and ts < ${at(toUs)}
    ) a order by day nulls last, seq, us`
  const k = all.findIndex((r) => r.day === null)
  const blocks = k < 0 ? all : all.slice(0, k)
  const hot = pointsOfRows(k < 0 ? [] : (all.slice(k) as Row[]))
  if (!blocks.length) return hot
  // Blocks of one day overlap in time (a day's block and its small or write blocks); blocks of different days do
  // not, so each day's are merged among themselves and the days laid end to end before the one merge with the rows.
  const days: Points[] = []
  let i = 0
  while (i < blocks.length) {
    let j = i
    while (j < blocks.length && blocks[j].day.getTime() === blocks[i].day.getTime()) j++
    days.push(mergePoints(blocks.slice(i, j).map((b) => decodeBlockPoints(b, Number(fromUs), Number(toUs)))))
    i = j
  }
  return mergePoints([mergePoints(days), hot])
}
