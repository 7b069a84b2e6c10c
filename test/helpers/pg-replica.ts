// A PostgreSQL primary with a streaming replica of the test's own, from the machine's PostgreSQL (Debian's
// postgresql package: initdb, then pg_basebackup -R for the standby), on free loopback ports. The replica can be
// stopped, started, and held back (WAL replay paused) to make it lag. The machine's shared server is never touched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSql, withDatabase } from '../../shared/db.js'
import { migrate } from '../../shared/migrate.js'
import { closedPort } from './http.js'
import { runAs } from './own-postgres.js'

export interface PrimaryWithReplica {
  /** A migrated database `metrics` on the primary. */
  primaryUrl: string
  /** The same database on the replica (read-only). */
  replicaUrl: string
  stopReplica(): Promise<void>
  startReplica(): Promise<void>
  /** Pauses WAL replay on the replica: it answers, and falls behind as the primary writes. */
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  destroy(): Promise<void>
}

/** The newest PostgreSQL installed by Debian's packages (/usr/lib/postgresql/<major>/bin), or undefined. */
export function machinePostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const major = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'pg_basebackup')))
    .sort((a, b) => Number(a) - Number(b))
    .pop()
  return major ? join(root, major, 'bin') : undefined
}

export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  const bin = machinePostgresBin()
  if (!bin) throw new Error('no PostgreSQL with pg_basebackup under /usr/lib/postgresql (Debian: apt-get install postgresql)')
  const ids = runAs()
  const dir = mkdtempSync(join(tmpdir(), 'metrics-pg-replica-'))
  if (ids.uid !== undefined) chownSync(dir, ids.uid, ids.gid!)
  const [primaryPort, replicaPort] = [await closedPort(), await closedPort()]
  const primaryData = join(dir, 'primary')
  const replicaData = join(dir, 'replica')
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(join(bin, tool), args, { ...ids, encoding: 'utf8', timeout: 120_000 })
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.error?.message}`)
  }
  const children = new Map<string, ChildProcess>()
  const start = async (name: 'primary' | 'replica') => {
    const data = name === 'primary' ? primaryData : replicaData
    const port = name === 'primary' ? primaryPort : replicaPort
    const c = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'max_connections=200',
        '-c',
        'wal_level=replica',
        '-c',
        'max_wal_senders=5',
        '-c',
        'hot_standby=on',
        '-c',
        'wal_receiver_status_interval=1s',
      ],
      { ...ids, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    children.set(name, c)
    let log = ''
    await new Promise<void>((resolve, reject) => {
      c.stderr!.on('data', (chunk: Buffer) => {
        log = (log + chunk.toString('utf8')).slice(-4000)
        if (/database system is ready to accept (read-only )?connections/.test(log)) resolve()
      })
      c.once('exit', (code) => reject(new Error(`postgres (${name}) exited with ${code}:\n${log}`)))
    })
    c.stderr!.resume()
  }
  const stop = async (name: string) => {
    const c = children.get(name)
    children.delete(name)
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    await new Promise((resolve) => {
      c.once('exit', resolve)
      c.kill('SIGINT')
    })
  }
  const onExit = () => {
    for (const c of children.values()) c.kill('SIGKILL')
  }
  process.on('exit', onExit)

  const primaryServer = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`
  const replicaServer = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`
  try {
    // initdb's pg_hba.conf with --auth=trust lets loopback clients in, replication connections included.
    run('initdb', ['-D', primaryData, '--auth=trust', '--username=postgres', '-E', 'UTF8', '--no-sync'])
    await start('primary')
    const admin = createSql(primaryServer, { max: 1 })
    await admin.unsafe('create database metrics')
    await admin.end()
    const sql = createSql(withDatabase(primaryServer, 'metrics'), { max: 1, statementTimeoutSeconds: 0 })
    await migrate(sql)
    await sql.end()
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaData,
      '-R',
      '-X',
      'stream',
      '--checkpoint=fast',
      '--no-sync',
    ])
    await start('replica')
  } catch (err) {
    onExit()
    process.removeListener('exit', onExit)
    rmSync(dir, { recursive: true, force: true })
    throw err
  }

  const onReplica = async (statement: string) => {
    const r = createSql(replicaServer, { max: 1 })
    try {
      await r.unsafe(statement)
    } finally {
      await r.end({ timeout: 1 })
    }
  }
  return {
    primaryUrl: withDatabase(primaryServer, 'metrics'),
    replicaUrl: withDatabase(replicaServer, 'metrics'),
    stopReplica: () => stop('replica'),
    startReplica: () => start('replica'),
    pauseReplay: () => onReplica('select pg_wal_replay_pause()'),
    resumeReplay: () => onReplica('select pg_wal_replay_resume()'),
    async destroy() {
      await stop('replica')
      await stop('primary')
      process.removeListener('exit', onExit)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
