// Producer side of the job registry: one BullMQ Queue per queue key, opened lazily.
import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import { jobs, parseJob, QUEUES, type JobData, type JobName, type QueueKey } from './jobs.js'

export class Queues {
  private readonly open = new Map<QueueKey, Queue>()

  constructor(private readonly config: Pick<Config, 'redisPrefix'>, private readonly connection: Redis) {}

  /** The BullMQ queue for a key (shares this object's connection). */
  get(key: QueueKey): Queue {
    let q = this.open.get(key)
    if (!q) {
      q = new Queue(QUEUES[key], { connection: this.connection, prefix: this.config.redisPrefix })
      this.open.set(key, q)
    }
    return q
  }

  /** Validates a payload against the registry and adds the job with its declared options. */
  async enqueue<N extends JobName>(name: N, data: JobData<N>, opts: { jobId?: string; delay?: number } = {}) {
    const spec = jobs[name]
    return this.get(spec.queue).add(name, parseJob(name, data), { ...spec.opts, ...opts })
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((q) => q.close()))
    this.open.clear()
  }
}
