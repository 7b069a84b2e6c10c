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

/** Told once a group is queued (no error) or was not (the error). */
export type Queued = (err?: unknown) => void

/**
 * Settles a group whose job add failed, by its batch id: true when the group will never be stored, false when it
 * was stored after all (points/repo.ts cancelBatch).
 */
export type CancelGroup = (batchId: string) => Promise<boolean>

export class PointBatcher {
  private points: QueuedPoint[] = []
  private waiters: Queued[] = []
  private timer: NodeJS.Timeout | undefined
  private readonly inFlight = new Set<Promise<void>>()
  /** A group job being added right now; the next group waits for it, so groups grow with load (at most one add in flight). */
  private adding: Promise<void> | undefined

  constructor(
    private readonly queues: Queues,
    private readonly cancel?: CancelGroup,
    private readonly opts: BatcherOptions = { maxDelayMs: 2, maxPoints: 500 },
  ) {}

  /** Resolves once the points are durably queued (or found stored); rejects when they were not (see enqueue). */
  add(points: QueuedPoint[]): Promise<void> {
    // A large group goes alone, so that it stays one job and one outcome.
    if (points.length >= this.opts.maxPoints) return this.track(this.enqueue(points))
    return new Promise<void>((resolve, reject) => this.join(points, (err) => (err === undefined ? resolve() : reject(err))))
  }

  /**
   * One point into the group, told through a callback: what add() does for a single write, without its promise
   * (the direct write route queues every write this way).
   */
  addOne(point: QueuedPoint, done: Queued): void {
    this.waiters.push(done)
    this.points.push(point)
    this.collected()
  }

  private join(points: QueuedPoint[], done: Queued): void {
    this.waiters.push(done)
    for (const p of points) this.points.push(p)
    this.collected()
  }

  /** The group is sent when full, else when its window (from its first point) ends. */
  private collected(): void {
    if (this.points.length >= this.opts.maxPoints) this.flush()
    else this.timer ??= setTimeout(() => this.flush(), this.opts.maxDelayMs)
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
        // The group collected meanwhile goes now if its window is over (its timer fired during the add), else
        // when its timer fires: an add that came back early does not cut the next group's window short, so a
        // busy process sends fewer, larger jobs (each add costs the web process, Redis and the worker about
        // the same whatever its size), and no point waits longer than when the batcher was idle.
        if (this.points.length && !this.timer) this.flush()
      })
    added.then(
      () => tell(waiters, undefined),
      (err) => tell(waiters, err ?? new Error('the group was not queued')),
    )
  }

  // No client-side timeout here on purpose: a job that is added after we gave up would be a point
  // stored behind an error answer. A lost connection fails the command (maxRetriesPerRequest: 1).
  private async enqueue(points: QueuedPoint[]): Promise<void> {
    const batchId = randomUUID()
    try {
      await this.queues.enqueue('persist-points', { batch_id: batchId, stats: packPoints(points) }, { jobId: batchId })
    } catch (err) {
      // A failed add may have reached Redis all the same: a connection lost after the command went out (Redis
      // stopping, say) loses only the reply, and a Redis with persistence hands the job to a worker once it is
      // back. The writer, told its points were not stored, sends them again, and a write without an ikey was
      // stored twice (npm run drills redis-restart and redis-outage: one or two points a stop). The group is
      // settled before anyone is told: never stored, and the refusal is true; or stored already, and accepted.
      // When PostgreSQL cannot say either, the refusal goes out as before.
      if (this.cancel && !(await this.cancel(batchId).catch(() => true))) return
      throw err
    }
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

/** Tells every waiter of a group; one that throws does not keep the others from being told (its error is thrown apart). */
function tell(waiters: Queued[], err: unknown): void {
  for (const done of waiters) {
    try {
      done(err)
    } catch (thrown) {
      queueMicrotask(() => {
        throw thrown
      })
    }
  }
}
