// Drills past one machine (docs/decisions.md §22): 2 web and 2 worker processes on a Redis Cluster of
// 3 masters and 3 replicas and a PostgreSQL primary with a streaming replica (DATABASE_READ_URL), under steady
// writes (the rig of drills.ts), while a reader asks for charts and exports and an alert fires to a local webhook
// receiver. Faults: a Redis master killed (its replica takes over), the PostgreSQL replica stopped, the replica
// held back past the lag limit. Besides the write counts of every drill: reads that got no 200, and the alert's
// deliveries (exactly one fired transition, delivered once).
import type { OwnPostgres } from '../../test/helpers/own-postgres.js'
import { startPrimaryWithReplica, type PrimaryWithReplica } from '../../test/helpers/pg-replica.js'
import { startHttpReceiver, type HttpReceiver } from '../../test/helpers/receivers.js'
import type { OwnRedis } from '../../test/helpers/redis-server.js'
import { startRedisCluster, type OwnRedisCluster } from '../../test/helpers/redis-cluster.js'
import { DrillRig, http, singleWithIkey, type DrillResult } from './drills.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface ScaleDrillResult extends DrillResult {
  /** Chart and export reads during the drill that were not answered 200. */
  readsFailed: number
  reads: number
  /** Accepted webhook deliveries of the alert's fired transition (1 is right). */
  alertDeliveries: number
}

/** Only what the rig needs of a server it does not fault through these handles. */
function unsupported(what: string): () => never {
  return () => {
    throw new Error(`${what}: the scale drills fault the cluster and the replica through their own handles`)
  }
}

export class ScaleRig {
  private constructor(
    readonly rig: DrillRig,
    readonly cluster: OwnRedisCluster,
    readonly pg: PrimaryWithReplica,
    readonly receiver: HttpReceiver,
  ) {}

  static async start(): Promise<ScaleRig> {
    const [c, p, r] = await Promise.allSettled([startRedisCluster(), startPrimaryWithReplica(), startHttpReceiver()])
    if (c.status === 'rejected' || p.status === 'rejected' || r.status === 'rejected') {
      // What did start is stopped: left running, its processes and sockets would keep the test process alive.
      await Promise.allSettled([
        c.status === 'fulfilled' && c.value.destroy(),
        p.status === 'fulfilled' && p.value.destroy(),
        r.status === 'fulfilled' && r.value.close(),
      ])
      throw [c, p, r].map((x) => (x.status === 'rejected' ? x.reason : undefined)).find(Boolean)
    }
    const [cluster, pg, receiver] = [c.value, p.value, r.value]
    const asPostgres: OwnPostgres = {
      url: pg.primaryUrl,
      port: 0,
      start: unsupported('start'),
      stop: unsupported('stop'),
      kill: unsupported('kill'),
      destroy: () => pg.destroy(),
    }
    const asRedis: OwnRedis = {
      url: cluster.url,
      port: 0,
      start: unsupported('start'),
      stop: unsupported('stop'),
      kill: unsupported('kill'),
      wipe: unsupported('wipe'),
      destroy: () => cluster.destroy(),
    }
    // Jobs held by a worker whose Redis connection broke in the failover come back once their lock lapses: 5 s.
    const rig = await DrillRig.start(
      { DATABASE_READ_URL: pg.replicaUrl, READ_REPLICA_MAX_LAG_SECONDS: '2', JOB_LOCK_SECONDS: '5' },
      async () => [asPostgres, asRedis],
    )
    await rig.spawn('worker') // 2 web + 2 workers
    return new ScaleRig(rig, cluster, pg, receiver)
  }

  /** Runs a fault like every drill, with a reader and an alert alongside. */
  async drill(name: string, fault: () => Promise<void>): Promise<ScaleDrillResult> {
    const { rig } = this
    const web = () => rig.webs[Math.floor(Math.random() * rig.webs.length)].port!
    const alertStat = `drill.alert.${name}`
    const created = await http(web(), '/api/v1/alerts', {
      bearer: rig.key,
      json: {
        stat_name: alertStat,
        condition_type: 'above',
        threshold: 100,
        window_minutes: 1,
        cooldown_minutes: 0,
        channel: 'webhook',
        channel_config: { webhook_url: this.receiver.url },
      },
    })
    if (created.status !== 201) throw new Error(`alert not created: ${created.status} ${JSON.stringify(created.body)}`)
    const alertId = created.body.alert.id as string
    let reading = true
    let reads = 0
    let readsFailed = 0
    const reader = (async () => {
      // The drill's stat is created by its first stored point: reads start once it exists.
      while (
        reading &&
        (await http(web(), `/api/v1/stats/drill.${name}?range=1h`, { bearer: rig.key }).catch(() => undefined))?.status !== 200
      )
        await sleep(100)
      for (let i = 0; reading; i++) {
        const path = i % 2 ? `/api/v1/stats/drill.${name}?range=1h` : `/api/v1/export?stat=drill.${name}&format=csv&range=1h`
        const res = await http(web(), path, { bearer: rig.key, timeoutMs: 10_000 }).catch((err: Error) => ({
          status: 0,
          body: err.message,
        }))
        reads++
        if (res.status !== 200) {
          readsFailed++
          process.stdout.write(`  read ${path.split('?')[0]} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}\n`)
        }
        await sleep(100)
      }
    })()
    // One path: the reader and the alert are the point of these drills, the write paths are the fault drills'.
    let result: DrillResult
    try {
      ;[result] = await rig.drill(name, async () => {
        // The breach is written as the fault starts: the alert fires while the fault is in force.
        const breach = await http(web(), `/api/v1/stats/${alertStat}/value`, { bearer: rig.key, json: { value: 500 } })
        if (breach.status !== 200) throw new Error(`breach not accepted: ${breach.status} ${JSON.stringify(breach.body)}`)
        await fault()
      }, [singleWithIkey])
    } finally {
      // A drill that throws must not leave its reader asking a rig that is closing (it would loop on refusals).
      reading = false
      await reader
    }
    const fired = await this.receiver.waitFor(1, (r) => r.json?.alert_id === alertId && r.json?.status === 'firing', 60_000)
    await sleep(3000) // a second delivery of the same transition would arrive within a couple of evaluations
    const deliveries = this.receiver.accepted().filter((r) => r.json?.alert_id === alertId && r.json?.status === 'firing')
    if (!fired.length) throw new Error('the alert never fired')
    return { ...result, reads, readsFailed, alertDeliveries: deliveries.length }
  }

  async close(): Promise<void> {
    await this.rig.close()
    await this.receiver.close()
  }
}

/** The scale drills, by name. */
export function scaleDrills(): Record<string, (s: ScaleRig) => Promise<void>> {
  return {
    'redis-master-kill': async (s) => {
      // The master of the ingest queue's slot: every accepted point passes through it.
      const master = await s.cluster.masterOf('{ingest}')
      await master.kill()
      // Its replica is promoted once the others have missed it for the node timeout.
      const deadline = Date.now() + 60_000
      while ((await s.cluster.masterOf('{ingest}').catch(() => master)) === master) {
        if (Date.now() > deadline) throw new Error('no replica took over the killed master within 60 s')
        await sleep(200)
      }
      await s.cluster.healthy(60_000)
      await master.start() // it comes back as a replica of the promoted one
    },
    'pg-replica-stop': async (s) => {
      await s.pg.stopReplica()
      await sleep(5000)
      await s.pg.startReplica()
    },
    'pg-replica-lag': async (s) => {
      await s.pg.pauseReplay()
      await sleep(6000) // past READ_REPLICA_MAX_LAG_SECONDS (2) while the drill writes
      await s.pg.resumeReplay()
    },
  }
}
