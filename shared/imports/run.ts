// The import job: persists an import's accepted points in batches (store.ts:
// each batch stored once, with its minute aggregates for the rollups, in one
// statement), recording progress after each. Batch ids are the import's id and
// the batch's number, so a retried or re-run job skips what it already stored;
// every point's import key is derived from its row (plan.ts importIkey), so a
// second import of the same rows, even from another file, stores nothing twice.
import type { Sql } from '../db.js'
import { loadImportWork, markCompleted, markRunning, recordProgress } from './repo.js'
import { PACKED_POINT_BYTES } from './service.js'
import { storeChunk, type ChunkPoints } from './store.js'

/** Points per batch: one transaction each; large enough that the per-batch cost is small, small enough for steady progress. */
export const IMPORT_BATCH = 10_000
/** Batches in flight at once: while PostgreSQL stores one, the next is prepared and sent (batches are independent). */
const IN_FLIGHT = 3

/** The record of one stored batch (applied_batches.id): the import and the batch's number. */
export const chunkId = (importId: string, n: number) => `import:${importId}:${n}`

/** Points start..end of the packed payload (service.ts pack), as storeChunk takes them. */
export function chunkOf(payload: Buffer, statIds: string[], start: number, end: number): ChunkPoints {
  const points: ChunkPoints = { statIds, six: [], t: [], value: [], occ: [] }
  for (let i = start; i < end; i++) {
    const at = i * PACKED_POINT_BYTES
    points.six.push(payload.readUInt32LE(at) + 1)
    points.t.push(payload.readDoubleLE(at + 4))
    points.value.push(`${payload.readDoubleLE(at + 12)}`)
    points.occ.push(payload.readUInt32LE(at + 20))
  }
  return points
}

export async function runImport(sql: Sql, importId: string): Promise<{ stored: number; skipped: number }> {
  const work = await loadImportWork(sql, importId)
  // Gone (account deleted) or done (a re-run after completion): nothing to do.
  if (!work || work.status === 'completed' || !work.payload) return { stored: 0, skipped: 0 }
  await markRunning(sql, importId)
  const { payload, stat_ids: statIds } = work
  const total = payload.length / PACKED_POINT_BYTES
  const batches = Math.ceil(total / IMPORT_BATCH)
  let next = 0
  let done = 0
  let stored = 0
  let skipped = 0
  let stop = false
  const batch = async (n: number) => {
    const start = n * IMPORT_BATCH
    const end = Math.min(total, start + IMPORT_BATCH)
    const r = await storeChunk(sql, chunkId(importId, n), chunkOf(payload, statIds, start, end))
    // A batch applied by an earlier run reports nothing: its skipped points were counted then.
    const fresh = r.applied ? r.duplicates : 0
    stored += r.stored
    skipped += fresh
    done += end - start
    await recordProgress(sql, importId, done, fresh)
  }
  const worker = async () => {
    // A failed batch stops its worker, and the others stop taking new batches.
    for (let n = next++; n < batches && !stop; n = next++) {
      await batch(n).catch((err) => {
        stop = true
        throw err
      })
    }
  }
  // On a failure, the batches in flight finish first: a retry must not run beside this run's leftovers.
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(IN_FLIGHT, batches) }, worker))
  const failed = outcomes.find((o) => o.status === 'rejected')
  if (failed) throw failed.reason
  await markCompleted(sql, importId)
  return { stored, skipped }
}
