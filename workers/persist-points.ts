// Stores batches of accepted points, exactly once (see applyBatches). Jobs
// running at the same time in this worker are committed together in one
// transaction (a group commit on the consumer side, as the API does on the
// producer side): under load, PostgreSQL pays one commit per group, not per job.
// A batch PostgreSQL refuses on its data is isolated (applyIsolating): its
// good points are stored and the refused ones parked, so that one bad point
// never costs another request, or another account, its acknowledged data.
import type { Sql } from '../shared/db.js'
import { pointsOf, type JobData } from '../shared/jobs.js'
import type { Logger } from '../shared/log.js'
import { isDataError } from '../shared/points/parked.js'
import { applyBatches, applyIsolating, type Batch } from '../shared/points/repo.js'
import type { WorkerDeps } from './deps.js'

// With the ingest worker's concurrency of 32, two groups can be committing while the next jobs are fetched.
const MAX_GROUP = 16
// How long the first job of a group waits for others. Under steady single-point load jobs arrive a few ms apart,
// so at 2 ms nearly every job was a statement and a commit of its own. Measured with persist jobs of 15 points at
// 2,500 points a second: 10 ms halved the transactions and cut PostgreSQL's CPU per point by about 30 %
// and the worker's by about 15 %; a point becomes visible up to 8 ms later, far inside the 1 s target.
const MAX_WAIT_MS = 10

interface Waiting {
  batch: Batch
  resolve(): void
  reject(err: unknown): void
}

/** One batch on its own; on a data error, its refused points are parked and the rest stored. A lost connection rejects (the job is retried). */
async function applyAlone(sql: Sql, log: Logger, batch: Batch): Promise<void> {
  try {
    await applyBatches(sql, [batch])
  } catch (err) {
    if (!isDataError(err)) throw err
    const r = await applyIsolating(sql, batch)
    for (const p of r.parked) {
      log.error(
        'point parked: PostgreSQL refused it; the other points of its batch were stored (list with `npm run cli -- points:parked`)',
        {
          batch_id: batch.id,
          stat_id: p.point[0],
          t: p.point[1],
          code: p.code,
          reason: p.reason,
          stored: r.stored,
        },
      )
    }
  }
}

class CommitGroups {
  private waiting: Waiting[] = []
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
  ) {}

  apply(batch: Batch): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ batch, resolve, reject }))
    if (this.waiting.length >= MAX_GROUP) this.flush()
    else this.timer ??= setTimeout(() => this.flush(), MAX_WAIT_MS)
    return done
  }

  private flush(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    const group = this.waiting
    this.waiting = []
    if (!group.length) return
    const alone = (w: Waiting) => applyAlone(this.sql, this.log, w.batch).then(() => w.resolve(), w.reject)
    if (group.length === 1) return void alone(group[0])
    void applyBatches(
      this.sql,
      group.map((w) => w.batch),
    ).then(
      () =>
        group.forEach((w) => {
          w.resolve()
        }),
      // One bad batch must not fail the others with it: on a group failure each is tried alone.
      () => group.forEach(alone),
    )
  }
}

const groups = new WeakMap<Sql, CommitGroups>()

export async function persistPointsJob(deps: WorkerDeps, data: JobData<'persist-points'>): Promise<{ points: number }> {
  let group = groups.get(deps.sql)
  if (!group) groups.set(deps.sql, (group = new CommitGroups(deps.sql, deps.log.child({ job: 'persist-points' }))))
  const points = pointsOf(data)
  await group.apply({ id: data.batch_id, points })
  return { points: points.length }
}
