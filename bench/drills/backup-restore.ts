// `npm run drills backup-restore` (issue 44, decisions.md 26): the documented backup and restore
// (docs/operations.md), drilled. The service writes steadily on every path (single, keyed, /ez and v1
// batches, InfluxDB line protocol, Prometheus remote write) against a PostgreSQL (Debian's 15, WAL archived with archive_command)
// and a Redis (AOF) of the drill's own. Mid-load a base backup is taken with pg_basebackup; later a recovery
// point is chosen and Redis' AOF folder copied at it; writes go on past it. Then fresh servers are restored
// on ports of their own: PostgreSQL from the base backup and the WAL archive up to the recovery point
// (point-in-time recovery), Redis from the AOF copy, and the service started on them. Reported: every point
// acknowledged before the recovery point present exactly once, what was in flight in Redis at the recovery
// point (persist jobs and their points) and what became of them, the recovery point objective (how far before
// the recovery point the restored database's newest commit lies: what Redis' in-flight jobs had to make up),
// and the restore time (to a healthy service, and until Redis' in-flight points were stored).
import { spawn, spawnSync } from 'node:child_process'
import { chownSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSql } from '../../shared/db.js'
import { pointsOf } from '../../shared/jobs.js'
import { Queues } from '../../shared/queues.js'
import { createRedis } from '../../shared/redis.js'
import { runAs, startOwnPostgres, type OwnPostgres } from '../../test/helpers/own-postgres.js'
import { startOwnRedis, type OwnRedis } from '../../test/helpers/redis-server.js'
import { remoteWriteBody } from '../../test/helpers/remote-write.js'
import { DrillRig, http, steadyPaths, storedOf, type DrillResult, type Ledger, type WritePath } from './drills.js'

/** Debian's PostgreSQL 15: its pg_basebackup, and a server of the same version (pg_basebackup refuses another major version's). */
export const PG_BIN = process.env.DRILL_PG_BIN ?? '/usr/lib/postgresql/15/bin'
/** A WAL segment is archived at least this often under load, and at the latest this long after a commit when idle. */
const ARCHIVE_TIMEOUT_S = 10
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * A protocol route as its agents use it: `batch` points a request (value i at t = base + i, seconds), the same
 * body resent only after a 5xx, a 429 or no answer (the same samples again, so a resend lands once), on the
 * next web process each attempt.
 */
function protocolPath(
  name: string,
  route: string,
  headers: Record<string, string>,
  encode: (ledger: Ledger, items: number[]) => BodyInit,
): WritePath {
  return {
    name,
    batch: 25,
    writers: 1,
    t: (base, i) => base + i,
    write: async (rig, ledger, items, w) => {
      const body = encode(ledger, items)
      for (let attempt = 0; attempt < 50; attempt++) {
        const sentAt = Date.now()
        const webs = rig.webs
        const res = await fetch(`http://127.0.0.1:${webs[(w + attempt) % webs.length].port}${route}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${rig.key}`, ...headers },
          body,
          signal: AbortSignal.timeout(10_000),
        }).catch(() => undefined)
        if (!res) return ledger.settle(items, 'unknown')
        if (res.status === 204) return ledger.settle(items, 'accepted', sentAt)
        if (res.status < 500 && res.status !== 429) return ledger.settle(items, 'refused')
        await sleep(200)
      }
      ledger.settle(items, 'refused')
    },
  }
}

/** InfluxDB line protocol (`<stat> value=<i> <t>`, seconds) on /api/v2/write. */
export const influxPath = protocolPath('influx-lines', '/api/v2/write?precision=s', { 'content-type': 'text/plain' }, (ledger, items) =>
  items.map((i) => `${ledger.stat} value=${i} ${ledger.t(i)}`).join('\n'),
)

/** Prometheus remote write 1.0 (snappy protobuf, one series `__name__` = the stat, milliseconds) on /api/v1/prom/write. */
export const remoteWritePath = protocolPath(
  'remote-write',
  '/api/v1/prom/write',
  { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf', 'x-prometheus-remote-write-version': '0.1.0' },
  (ledger, items) => {
    const timeseries = [
      { labels: [{ name: '__name__', value: ledger.stat }], samples: items.map((i) => ({ value: i, timestamp: ledger.t(i) * 1000 })) },
    ]
    return remoteWriteBody(timeseries)
  },
)

/** The paths written during the drill: every kind. */
const paths: WritePath[] = [...steadyPaths, influxPath, remoteWritePath]

/** Runs a command as PostgreSQL's user; rejects with its output when it fails. */
function runPg(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(join(PG_BIN, cmd), args, { ...runAs(), stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    c.stdout!.on('data', (d: Buffer) => (out += d))
    c.stderr!.on('data', (d: Buffer) => (out += d))
    c.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}: ${out}`))))
  })
}

/** A folder PostgreSQL's user owns (as root, the server runs as `postgres`). */
function pgFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const ids = runAs()
  if (ids.uid !== undefined) chownSync(dir, ids.uid, ids.gid!)
  return dir
}

function bytesOf(path: string): number {
  const s = statSync(path)
  return s.isDirectory() ? readdirSync(path).reduce((n, f) => n + bytesOf(join(path, f)), 0) : s.size
}

export class BackupRig {
  private constructor(
    readonly rig: DrillRig,
    readonly archive: string,
    readonly folders: string[],
  ) {}

  /** The service on a PostgreSQL archiving its WAL into a folder of the drill's, and a Redis with AOF. */
  static async start(): Promise<BackupRig> {
    const archive = pgFolder('metrics-wal-archive-')
    const backing = async (): Promise<[OwnPostgres, OwnRedis]> =>
      Promise.all([
        startOwnPostgres({
          binDir: PG_BIN,
          args: [
            '-c',
            'wal_level=replica',
            '-c',
            'archive_mode=on',
            '-c',
            `archive_command=test ! -f ${archive}/%f && cp %p ${archive}/%f`,
            '-c',
            `archive_timeout=${ARCHIVE_TIMEOUT_S}`,
            '-c',
            'max_wal_senders=4',
          ],
        }),
        startOwnRedis({ aof: true }),
      ])
    return new BackupRig(await DrillRig.start({}, backing), archive, [archive])
  }

  async close(): Promise<void> {
    await this.rig.close()
    for (const f of this.folders) rmSync(f, { recursive: true, force: true })
  }
}

export interface BackupRestoreResult extends DrillResult {
  ackedBeforeRecoveryPoint: number
  /** Of those, found exactly once in the restored database. */
  presentOnce: number
  ackedAfterRecoveryPoint: number
  /** Points acknowledged after the recovery point that the restore holds anyway (in the AOF copy, taken just after it). */
  afterRecoveryPointRestored: number
}

/** The drill: returns one row per write path (counts against the restored servers), and prints the backup's figures. */
export async function backupRestoreDrill(b: BackupRig): Promise<BackupRestoreResult[]> {
  const { rig } = b
  const backupDir = pgFolder('metrics-basebackup-')
  const redisCopy = mkdtempSync(join(tmpdir(), 'metrics-redis-backup-'))
  b.folders.push(backupDir, redisCopy)
  const base = join(backupDir, 'base')
  let recoveryPoint = 0
  /** Points acknowledged before this (the AOF copy's start) must all be restored. */
  let ackedBy = 0
  const figures: Record<string, unknown> = {}

  // The source run: writes on every path; the base backup mid-load; the recovery point later, with the AOF copy.
  const source = await rig.drill(
    'backup-restore',
    async () => {
      await sleep(3000)
      const started = Date.now()
      await runPg('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(rig.pg.port),
        '-U',
        'postgres',
        '-D',
        base,
        '-X',
        'stream',
        '-c',
        'fast',
      ])
      figures.baseBackupSeconds = (Date.now() - started) / 1000
      figures.baseBackupBytes = bytesOf(base)
      await sleep(4000)
      // The recovery point: an operator's "restore to 12:03:07". Redis' AOF is copied first, and PostgreSQL is
      // recovered to the moment the copy ended: Redis must never be newer than PostgreSQL. A job the worker
      // stored and removed while the copy was being read is then in PostgreSQL; recovered to the copy's start
      // instead, its points were in neither (a keyed point lost this way in one run). Every point acknowledged
      // before the copy began is in the copy (Redis writes the AOF before it replies) or in PostgreSQL.
      const copyStarted = Date.now()
      cpSync(rig.redis.dir!, redisCopy, { recursive: true })
      recoveryPoint = Date.now()
      ackedBy = copyStarted
      figures.redisCopyMs = recoveryPoint - copyStarted
      await sleep(4000)
    },
    paths,
  )
  const ledgers = rig.ledgers
  // Every WAL record up to past the recovery point is archived: recovery needs the first commit after it to stop.
  const [{ wal }] = await rig.sql<[{ wal: string }]>`select pg_walfile_name(pg_switch_wal()) as wal`
  for (let i = 0; ; i++) {
    const [{ last }] = await rig.sql<[{ last: string | null }]>`select last_archived_wal as last from pg_stat_archiver`
    if (last && last >= wal) break
    if (i > 300) throw new Error(`WAL ${wal} was not archived within 30 s (last ${last})`)
    await sleep(100)
  }
  figures.walArchivedBytes = bytesOf(b.archive)
  const sourceLost = source.reduce((n, r) => n + r.lost + r.duplicated, 0)
  if (sourceLost) throw new Error(`the source run itself lost or doubled points: ${JSON.stringify(source)}`)
  await rig.stopService()

  // The restore, into fresh servers on ports of their own.
  const restoreStarted = Date.now()
  const data = join(pgFolder('metrics-pg-restored-'), 'data')
  const ids = runAs()
  const copy = spawnSync('cp', ['-a', base, data], { ...ids, encoding: 'utf8' })
  if (copy.status !== 0) throw new Error(`copying the base backup failed: ${copy.stderr}`)
  b.folders.push(join(data, '..'))
  writeFileSync(join(data, 'recovery.signal'), '')
  appendFileSync(
    join(data, 'postgresql.auto.conf'),
    [
      `restore_command = 'cp ${b.archive}/%f %p'`,
      `recovery_target_time = '${new Date(recoveryPoint).toISOString().replace('T', ' ').replace('Z', '+00')}'`,
      `recovery_target_action = 'promote'`,
      `archive_mode = off`,
      '',
    ].join('\n'),
  )
  if (ids.uid !== undefined) for (const f of ['recovery.signal', 'postgresql.auto.conf']) chownSync(join(data, f), ids.uid, ids.gid!)
  const [pg, redis] = await Promise.all([startOwnPostgres({ binDir: PG_BIN, data }), startOwnRedis({ aof: true, dir: redisCopy })])
  figures.databasesUpSeconds = (Date.now() - restoreStarted) / 1000
  const sql = createSql(pg.url, { max: 2 })
  let restored: DrillRig | undefined
  try {
    // What the restored database holds, and how far before the recovery point its newest commit lies.
    const [{ newest }] = await sql<[{ newest: Date | null }]>`select max(applied_at) as newest from applied_batches`
    figures.rpoSeconds = newest ? Math.max(0, (recoveryPoint - newest.getTime()) / 1000) : null
    // What was in flight in Redis at the recovery point: persist jobs not yet done, and whether PostgreSQL already had them.
    const queueRedis = createRedis({ redisUrl: redis.url })
    const queues = new Queues({ redisPrefix: rig.prefix }, queueRedis)
    const jobs = await queues.get('ingest').getJobs(['waiting', 'prioritized', 'active', 'delayed', 'failed'])
    await queues.close()
    queueRedis.disconnect()
    const ids = jobs.map((j) => j.data.batch_id as string)
    const applied = new Set((await sql<Array<{ id: string }>>`select id from applied_batches where id = any(${ids})`).map((r) => r.id))
    const points = (pred: (id: string) => boolean) =>
      jobs.filter((j) => pred(j.data.batch_id)).reduce((n, j) => n + pointsOf(j.data).length, 0)
    figures.inFlight = {
      jobs: jobs.length,
      points: points(() => true),
      alreadyStoredJobs: applied.size,
      alreadyStoredPoints: points((id) => applied.has(id)),
      toStoreJobs: jobs.length - applied.size,
      toStorePoints: points((id) => !applied.has(id)),
    }
    const before = new Map<string, number>()
    for (const l of ledgers)
      before.set(
        l.stat,
        [...(await storedOf(sql, l.stat)).values()].reduce((n, s) => n + s.n, 0),
      )

    restored = await DrillRig.attach(pg, redis, rig.prefix, rig.key)
    await restored.healthy()
    figures.restoreSeconds = (Date.now() - restoreStarted) / 1000
    await restored.settle(60_000)
    figures.drainedSeconds = (Date.now() - restoreStarted) / 1000
    // The in-flight points are stored by the restored worker: the difference per stat, against what Redis held.
    let storedAfter = 0
    const results: BackupRestoreResult[] = []
    for (const l of ledgers) {
      const stored = await storedOf(sql, l.stat)
      storedAfter += [...stored.values()].reduce((n, s) => n + s.n, 0) - before.get(l.stat)!
      results.push({
        drill: 'backup-restore',
        ...check(l, stored, ackedBy),
        recoverySeconds: figures.restoreSeconds as number,
        logLines: 0,
      })
    }
    ;(figures.inFlight as Record<string, number>).storedAfterRestore = storedAfter
    // A write after the restore: the service works on the restored servers.
    const res = await http(restored.webs[0].port!, '/api/v1/stats/drill.after-restore/value', { json: { value: 1 }, bearer: rig.key })
    figures.writeAfterRestore = res.status
    process.stdout.write(`  backup-restore: ${JSON.stringify({ recoveryPoint: new Date(recoveryPoint).toISOString(), ...figures })}\n`)
    if (res.status !== 200) throw new Error(`a write after the restore answered ${res.status}`)
    return results
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {})
    if (restored) await restored.close()
    else await Promise.all([pg.destroy(), redis.destroy()])
  }
}

/** One path's counts on the restored servers: `lost` is a point acknowledged before the AOF copy began (`ackedBy`) missing. */
function check(
  l: Ledger,
  stored: Map<number, { n: number }>,
  ackedBy: number,
): Omit<BackupRestoreResult, 'drill' | 'recoverySeconds' | 'logLines'> {
  const accepted = [...l.outcome].filter(([, o]) => o === 'accepted').map(([i]) => i)
  const before = accepted.filter((i) => l.acceptedAt.get(i)! <= ackedBy)
  const after = accepted.filter((i) => l.acceptedAt.get(i)! > ackedBy)
  return {
    path: l.path.name,
    sent: l.outcome.size,
    accepted: accepted.length,
    stored: [...stored.values()].reduce((n, s) => n + s.n, 0),
    lost: before.filter((i) => !stored.has(i)).length,
    lostInWipe: 0,
    wipeWindowMs: null,
    duplicated: [...stored.values()].reduce((n, s) => n + s.n - 1, 0),
    misplaced: 0,
    storedRefused: [...l.outcome].filter(([i, o]) => o === 'refused' && stored.has(i)).length,
    unknownOutcome: [...l.outcome].filter(([, o]) => o === 'unknown').length,
    ackedBeforeRecoveryPoint: before.length,
    presentOnce: before.filter((i) => stored.get(i)?.n === 1).length,
    ackedAfterRecoveryPoint: after.length,
    afterRecoveryPointRestored: after.filter((i) => stored.has(i)).length,
  }
}

/** Registered in run.ts beside the other drills. */
export function backupRestoreDrills(): Record<string, (b: BackupRig) => Promise<BackupRestoreResult[]>> {
  return { 'backup-restore': backupRestoreDrill }
}
