// Group commit (DESIGN.md decision 2): accepted points are collected for at
// most a couple of milliseconds (or a few hundred points) and enqueued as one
// persist-points job; every request in the group is answered once Redis has
// acknowledged that job. Durable before the answer, batched for throughput.
import { randomUUID } from 'node:crypto'
import type { QueuedPoint } from '../jobs.js'
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

  constructor(private readonly queues: Queues, private readonly opts: BatcherOptions = { maxDelayMs: 2, maxPoints: 500 }) {}

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
    const points = this.points
    const waiters = this.waiters
    this.points = []
    this.waiters = []
    if (!points.length) return
    void this.track(this.enqueue(points)).then(
      () => waiters.forEach((w) => w.resolve()),
      (err) => waiters.forEach((w) => w.reject(err)),
    )
  }

  // No client-side timeout here on purpose: a job that is added after we gave up would be a point
  // stored behind an error answer. A lost connection fails the command (maxRetriesPerRequest: 1).
  private async enqueue(points: QueuedPoint[]): Promise<void> {
    const batchId = randomUUID()
    await this.queues.enqueue('persist-points', { batch_id: batchId, points }, { jobId: batchId })
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p)
    void p.catch(() => {}).finally(() => this.inFlight.delete(p))
    return p
  }

  /** Sends what is collected and waits for every job in flight (graceful shutdown). */
  async drain(): Promise<void> {
    this.flush()
    await Promise.allSettled([...this.inFlight])
  }
}
