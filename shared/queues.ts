// Producer side of the job registry: one BullMQ Queue per queue key, opened lazily.
import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import { jobs, parseJob, QUEUES, type JobData, type JobName, type JobSpec, type QueueKey } from './jobs.js'

export class Queues {
  private readonly open = new Map<QueueKey, Queue>()

  /** `onError`: a queue's connection errors (without a listener, BullMQ prints each one, a multi-line dump, to stderr). */
  /** `ownsConnection`: close() also disconnects `connection` (BullMQ leaves connections it was handed open). */
  constructor(
    private readonly config: Pick<Config, 'redisPrefix'>,
    private readonly connection: Redis,
    private readonly onError: (err: Error) => void = () => {},
    private readonly opts: { ownsConnection?: boolean } = {},
  ) {}

  /** The BullMQ queue for a key (shares this object's connection). */
  get(key: QueueKey): Queue {
    let q = this.open.get(key)
    if (!q) {
      q = new Queue(QUEUES[key], { connection: this.connection, prefix: this.config.redisPrefix })
      q.on('error', this.onError)
      this.open.set(key, q)
    }
    return q
  }

  /** Validates a payload against the registry and adds the job with its declared options. */
  async enqueue<N extends JobName>(name: N, data: JobData<N>, opts: { jobId?: string; delay?: number; attempts?: number } = {}) {
    const spec = jobs[name]
    return this.get(spec.queue).add(name, parseJob(name, data), { ...spec.opts, ...opts })
  }

  /**
   * Registers every scheduled job of the registry that Redis does not hold (all of them on a first start, or after
   * Redis came back empty); returns the names (re)registered. A scheduler is stored under a fixed id, so processes
   * doing this at once still leave exactly one of each.
   */
  async ensureSchedules(
    config: Pick<Config, 'alertEvalIntervalSeconds' | 'anomalySweepIntervalSeconds' | 'compactionIntervalSeconds'>,
    opts: { update?: boolean } = {},
  ): Promise<string[]> {
    const registered: string[] = []
    for (const [name, spec] of Object.entries(jobs) as Array<[string, JobSpec]>) {
      if (!spec.every) continue
      const queue = this.get(spec.queue)
      // `update` (at start-up) also rewrites existing ones, so that a changed interval takes effect.
      if (!opts.update && (await queue.getJobScheduler(name))) continue
      await queue.upsertJobScheduler(name, { every: spec.every(config) }, { name, data: {}, opts: spec.opts })
      registered.push(name)
    }
    return registered
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((q) => q.close()))
    this.open.clear()
    if (this.opts.ownsConnection) this.connection.disconnect()
  }
}
