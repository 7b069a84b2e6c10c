// Storing one chunk of an import's accepted points: the import's own path,
// one statement (its own transaction, one round trip) per chunk, instead of
// the general persist path's four (applyBatches with ikeys: record, lock,
// ikeys, points, with every point sent twice and the won keys matched in JS).
// The behaviour is the general path's, step for step and in the same order:
//   1. the chunk is recorded in applied_batches as `import:<import id>:<n>`,
//      so a retried or re-run job stores nothing twice;
//   2. the chunk's stats are locked against a concurrent delete (for key
//      share), and points of stats deleted since the import started die with them;
//   3. each point's import key (stat, second, `import:<occurrence>:<value>`,
//      plan.ts importIkey) goes to point_ikeys, first write wins: a second
//      import of the same rows (from any file, at the same time or after)
//      stores nothing twice, and the preview counts them as duplicates;
//   4. the points whose key was new are stored, and their per-minute
//      aggregates appended to rollup_pending (the general path's CTE).
import type { Sql } from '../db.js'
import { behindEdge } from '../points/compaction.js'
import { pendingOf } from '../points/repo.js'

export interface ChunkPoints {
  /** Stat ids; each point names its stat by position (1-based) in this list. */
  statIds: string[]
  six: number[]
  t: number[]
  /**
   * Values as importIkey writes them (`${value}`): JavaScript's shortest form, which PostgreSQL reads back
   * as the same double, so the value is sent once, inside the key. (-0 never reaches here: the ingest
   * number rules store it as 0.)
   */
  value: string[]
  occ: number[]
}

export interface ChunkResult {
  /** False when an earlier run stored this chunk: it reports nothing. */
  applied: boolean
  stored: number
  /** Points of live stats whose import key was already stored (another import of the same rows). */
  duplicates: number
}

export async function storeChunk(sql: Sql, chunkId: string, points: ChunkPoints): Promise<ChunkResult> {
  const { statIds, six, t, value, occ } = points
  // Keys are unique within an import (the occurrence tells identical rows apart), so each key that
  // point_ikeys takes is one point, whose value is read back from the key: no join back to the input.
  const [row] = await sql<{ applied: boolean; alive: number; stored: number }[]>`
    with fresh as (
      insert into applied_batches (id, points) values (${chunkId}, ${six.length})
      on conflict do nothing returning id
    ),
    locked as (
      select id from stats where id = any(${statIds}::uuid[]) and exists (select 1 from fresh) for key share
    ),
    live as (
      select s.id, s.ix from unnest(${statIds}::uuid[]) with ordinality as s(id, ix) join locked using (id)
    ),
    incoming as materialized (
      select live.id as stat_id, to_timestamp(u.t) as ts, 'import:' || u.occ || ':' || u.v as ikey
      from unnest(${six}::int[], ${t}::bigint[], ${value}::text[], ${occ}::int[]) as u(six, t, v, occ)
      join live on live.ix = u.six
    ),
    keyed as (
      insert into point_ikeys (stat_id, ts, ikey)
      select stat_id, ts, ikey from incoming
      on conflict do nothing
      returning stat_id, ts, ikey
    ),
    inserted as (
      insert into points (stat_id, ts, value)
      select stat_id, ts, split_part(ikey, ':', 3)::float8 from keyed
      returning stat_id, ts, value
    ),
    ${pendingOf(sql, behindEdge(t.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY)))}
    select exists (select 1 from fresh) as applied, (select count(*) from incoming)::int as alive,
      (select count(*) from inserted)::int as stored, (select count(*) from pending)::int as buckets`
  return { applied: row.applied, stored: row.stored, duplicates: row.alive - row.stored }
}
