// Stores batches of accepted points, exactly once (see applyBatches). Jobs
// running at the same time in this worker are committed together in one
// transaction (a group commit on the consumer side, as the API does on the
// producer side): under load, PostgreSQL pays one commit per group, not per job.
import type { Sql } from '../shared/db.js'
import { pointsOf, type JobData } from '../shared/jobs.js'
import { applyBatches, type Batch } from '../shared/points/repo.js'
import type { WorkerDeps } from './deps.js'

// With the ingest worker's concurrency of 32, two groups can be committing while the next jobs are fetched.
const MAX_GROUP = 16
const MAX_WAIT_MS = 2

interface Waiting {
  batch: Batch
  resolve(): void
  reject(err: unknown): void
}

class CommitGroups {
  private waiting: Waiting[] = []
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly sql: Sql) {}

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
    void applyBatches(this.sql, group.map((w) => w.batch)).then(
      () => group.forEach((w) => w.resolve()),
      // One bad batch must not fail the others with it: on a group failure each is tried alone.
      () => group.forEach((w) => applyBatches(this.sql, [w.batch]).then(() => w.resolve(), w.reject)),
    )
  }
}

const groups = new WeakMap<Sql, CommitGroups>()

export async function persistPointsJob(deps: WorkerDeps, data: JobData<'persist-points'>): Promise<{ points: number }> {
  let group = groups.get(deps.sql)
  if (!group) groups.set(deps.sql, (group = new CommitGroups(deps.sql)))
  const points = pointsOf(data)
  await group.apply({ id: data.batch_id, points })
  return { points: points.length }
}
