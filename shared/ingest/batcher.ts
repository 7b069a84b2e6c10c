// Group commit (docs/decisions.md §D-2): accepted points are collected for at
// most a couple of milliseconds (or a few hundred points) and enqueued as one
// persist-points job; every request in the group is answered once Redis has
// acknowledged that job. Durable before the answer, batched for throughput.
import { randomUUID } from 'node:crypto'
import { packPoints, type QueuedPoint } from '../jobs.js'
import type { Queues } from '../queues.js'

export interface BatcherOptions {
  maxDelayMs: number
  maxPoints: number
}

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

export class PointBatcher {
  private points: QueuedPoint[] = []
  private waiters: Waiter[] = []
  private timer: NodeJS.Timeout | undefined
  private readonly inFlight = new Set<Promise<void>>()
  /** A group job being added right now; the next group waits for it, so groups grow with load (at most one add in flight). */
  private adding: Promise<void> | undefined

  constructor(
    private readonly queues: Queues,
    private readonly opts: BatcherOptions = { maxDelayMs: 2, maxPoints: 500 },
  ) {}

  /** Resolves once the points are durably queued; rejects when they were not (nothing of them was queued). */
  add(points: QueuedPoint[]): Promise<void> {
    // A large group goes alone, so that it stays one job and one outcome.
    if (points.length >= this.opts.maxPoints) return this.track(this.enqueue(points))
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    this.points.push(...points)
    if (this.points.length >= this.opts.maxPoints) this.flush()
    else this.timer ??= setTimeout(() => this.flush(), this.opts.maxDelayMs)
    return done
  }

  private flush(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    // Under load, adding a job takes longer than the collection window: keep collecting while an add is in
    // flight; its completion sends everything collected meanwhile as one job (fewer, larger batches).
    if (this.adding && this.points.length < this.opts.maxPoints) return
    const points = this.points
    const waiters = this.waiters
    this.points = []
    this.waiters = []
    if (!points.length) return
    const added = this.track(this.enqueue(points))
    this.adding = added
      .catch(() => {})
      .finally(() => {
        this.adding = undefined
        if (this.points.length) this.flush()
      })
    added.then(
      () =>
        waiters.forEach((w) => {
          w.resolve()
        }),
      (err) =>
        waiters.forEach((w) => {
          w.reject(err)
        }),
    )
  }

  // No client-side timeout here on purpose: a job that is added after we gave up would be a point
  // stored behind an error answer. A lost connection fails the command (maxRetriesPerRequest: 1).
  private async enqueue(points: QueuedPoint[]): Promise<void> {
    const batchId = randomUUID()
    await this.queues.enqueue('persist-points', { batch_id: batchId, stats: packPoints(points) }, { jobId: batchId })
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p)
    void p.catch(() => {}).finally(() => this.inFlight.delete(p))
    return p
  }

  /** Sends what is collected and waits for every job in flight (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.points.length || this.inFlight.size) {
      this.flush()
      await Promise.allSettled([...this.inFlight, this.adding])
    }
  }
}
