// Reads that may trail the primary by a few seconds (charts, exports, the stats dashboard, analytics) go to a
// PostgreSQL streaming replica when DATABASE_READ_URL names one (docs/decisions.md §22); everything else, and
// every read that must see the caller's own latest write, stays on the primary. The replica is checked every
// second: one that lags more than READ_REPLICA_MAX_LAG_SECONDS, is unreachable or is no longer a standby is
// bypassed until it is fit again, with one log line per change. A read that fails on the replica because the
// replica went away between two checks is run again on the primary: these reads change nothing. A streamed export
// runs each of its pages as such a read (shared/export/stream.ts), so it too survives the replica's loss.
import type { Config } from './config.js'
import { createSql, type Sql } from './db.js'
import type { Logger } from './log.js'
import { dependencyDown } from './outages.js'

export type ReplicaState = 'none' | 'in_use' | 'lagging' | 'unreachable' | 'not_a_standby'

export interface ReplicaHealth {
  state: ReplicaState
  /** Seconds the replica trails the primary at the last check (absent when it could not be asked). */
  lag_s?: number
  /** Why it is bypassed, in words. */
  reason?: string
}

const CHECK_EVERY_MS = 1000
const CHECK_TIMEOUT_MS = 2000

export class ReadPool {
  /** Undefined until the first check, so that its outcome is logged whatever it is. */
  private state: ReplicaState | undefined
  private lag: number | undefined
  private reason: string | undefined
  private readonly timer: NodeJS.Timeout | undefined
  private readonly replica: Sql | undefined
  private readonly maxLagSeconds: number
  private checking: Promise<void> = Promise.resolve()
  /** The primary's WAL position at each recent check. */
  private readonly samples: Array<{ at: number; lsn: bigint }> = []

  /**
   * Over the primary alone when DATABASE_READ_URL is unset; else the replica, checked from now on (reads go to the
   * primary until the first check finds the replica fit).
   */
  constructor(
    config: Pick<Config, 'databaseReadUrl' | 'readReplicaMaxLagSeconds'>,
    private readonly primary: Sql,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    opts: { checkEveryMs?: number } = {},
  ) {
    this.maxLagSeconds = config.readReplicaMaxLagSeconds
    this.replica = config.databaseReadUrl
      ? createSql(config.databaseReadUrl, { applicationName: 'metrics-reads', connectTimeoutSeconds: 2 })
      : undefined
    this.state = this.replica ? undefined : 'none'
    if (this.replica) {
      this.timer = setInterval(() => void this.check(), opts.checkEveryMs ?? CHECK_EVERY_MS)
      this.timer.unref()
      void this.check()
    }
  }

  /** Runs a lag-tolerant read on the replica when it is fit, else (or when the replica fails under it) on the primary. */
  async run<T>(read: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.state !== 'in_use') return read(this.primary)
    try {
      return await read(this.replica!)
    } catch (err) {
      if (dependencyDown(err) !== 'postgres') throw err
      this.move('unreachable', undefined, (err as Error).message)
      return read(this.primary)
    }
  }

  health(): ReplicaHealth {
    return {
      state: this.state ?? 'unreachable',
      ...(this.lag !== undefined ? { lag_s: Math.round(this.lag * 10) / 10 } : {}),
      ...(this.reason ? { reason: this.reason } : {}),
    }
  }

  /** Asks the primary how far its WAL has gone and the replica how far it has replayed (one check at a time). */
  check(): Promise<void> {
    if (!this.replica) return Promise.resolve()
    this.checking = this.checking.then(() => this.measure()).catch(() => {})
    return this.checking
  }

  /**
   * The lag is measured against the primary's own WAL positions as this pool saw them, once a check, so that no
   * clock but this process's is involved: the replica holds everything the primary held at the newest sample
   * it has replayed past, so it trails by at most the time since that sample. An idle primary writes nothing,
   * and a replica caught up with it has no lag however old its last transaction; a replica whose replay stopped
   * falls behind by a second each second the primary writes.
   */
  private async measure(): Promise<void> {
    const replica = this.replica!
    // With the primary down there is nothing to compare with: the replica keeps its state (requests fail on the primary anyway).
    const primaryAt = await this.primary<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`.catch(() => undefined)
    if (!primaryAt) return
    const now = Date.now()
    this.samples.push({ at: now, lsn: parseLsn(primaryAt[0].lsn) })
    const keepFrom = now - (this.maxLagSeconds + 5) * 1000
    while (this.samples.length > 1 && this.samples[0].at < keepFrom) this.samples.shift()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)
    })
    try {
      const [r] = await Promise.race([
        replica<{ standby: boolean; replayed: string | null }[]>`
        select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replayed`,
        timeout,
      ])
      if (!r.standby)
        return this.move('not_a_standby', undefined, 'the server at DATABASE_READ_URL is not in recovery (promoted, or not a replica)')
      const replayed = r.replayed === null ? -1n : parseLsn(r.replayed)
      const holds = [...this.samples].reverse().find((x) => x.lsn <= replayed)
      // Replayed none of the samples: it trails by at least the oldest one's age.
      const lag = (now - (holds ?? this.samples[0]).at) / 1000
      if (lag > this.maxLagSeconds)
        return this.move('lagging', lag, `${lag.toFixed(1)} s or more behind the primary (limit ${this.maxLagSeconds} s)`)
      this.move('in_use', lag)
    } catch (err) {
      this.move('unreachable', undefined, (err as Error).message)
    } finally {
      clearTimeout(timer)
    }
  }

  private move(state: ReplicaState, lag: number | undefined, reason?: string): void {
    const before = this.state
    this.state = state
    this.lag = lag
    this.reason = reason
    if (state === before) return
    if (state === 'in_use')
      this.log.info('read replica in use: chart, export, dashboard and analytics reads go to it', { replica: state, lag_s: lag })
    else this.log.warn(`read replica bypassed, reads go to the primary: ${reason}`, { replica: state })
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    await this.checking
    await this.replica?.end({ timeout: 1 })
  }
}

/** A WAL position (`16/B374D848`) as a number. */
function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split('/')
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}
