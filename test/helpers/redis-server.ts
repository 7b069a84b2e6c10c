// A redis-server of the test's own on a free loopback port, to stop, kill and
// restart under a running service (the machine's shared Redis is never touched).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { closedPort } from './http.js'

export interface OwnRedis {
  url: string
  port: number
  /** The data folder (the AOF's appendonlydir is in it). */
  dir?: string
  /** Starts (again) on the same port and data folder. */
  start(): Promise<void>
  /** SIGTERM: Redis writes its AOF/RDB and exits. */
  stop(): Promise<void>
  /** SIGKILL: nothing more is written. */
  kill(): Promise<void>
  /** Removes what the server persisted (while it is stopped): the next start is empty. */
  wipe(): void
  /** Stops and removes the data folder. */
  destroy(): Promise<void>
}

/**
 * `aof`: appendonly yes (fsync every second); otherwise no persistence at all. `args`: extra server options.
 * `dir`: a data folder to start from (a copy of another server's, to restore it); default a new empty one.
 */
export async function startOwnRedis(opts: { aof?: boolean; args?: string[]; dir?: string } = {}): Promise<OwnRedis> {
  const port = await closedPort()
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'metrics-redis-'))
  let child: ChildProcess | undefined
  const url = `redis://127.0.0.1:${port}`

  const ping = async () => {
    const r = new Redis(url, {
      lazyConnect: true,
      connectTimeout: 500,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    })
    r.on('error', () => {})
    try {
      await r.connect()
      return (await r.ping()) === 'PONG'
    } catch {
      return false
    } finally {
      r.disconnect()
    }
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
  const start = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      opts.aof ? 'yes' : 'no',
      '--appendfsync',
      'everysec',
      '--loglevel',
      'warning',
      ...(opts.args ?? []),
    ]
    const c = spawn('redis-server', args, { stdio: 'ignore' })
    child = c
    const deadline = Date.now() + 10_000
    while (!(await ping())) {
      if (c.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${c.exitCode}`)
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within 10 s`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  await start()
  return {
    url,
    port,
    dir,
    start,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    wipe() {
      for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true })
    },
    async destroy() {
      await end('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
