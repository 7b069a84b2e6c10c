// What job handlers can reach.
import type { Config } from '../shared/config.js'
import type { Sql } from '../shared/db.js'
import type { Logger } from '../shared/log.js'
import type { Queues } from '../shared/queues.js'

export interface WorkerDeps {
  config: Config
  sql: Sql
  log: Logger
  queues: Queues
}

/** Which try of a job this is; `final` when BullMQ will not retry after a failure. */
export interface Attempt {
  number: number
  final: boolean
}
