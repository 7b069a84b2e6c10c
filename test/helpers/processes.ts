// How tests start the service's web and worker processes as processes of their own (fault drills, a
// killed worker): under `npm test` from the entry points test/compile.ts compiled (test/run.ts says
// where), otherwise from the sources through tsx, as `npm run dev` runs them.
import { spawn, type ChildProcess } from 'node:child_process'

/** Set by test/run.ts to the folder holding api/server.mjs and workers/main.mjs. */
export const COMPILED_SERVICE_ENV = 'TEST_COMPILED_SERVICE_DIR'

/** Node's arguments to run `api/server.ts` or `workers/main.ts` (from the project folder). */
export function serviceArgs(entry: 'api/server.ts' | 'workers/main.ts'): string[] {
  const dir = process.env[COMPILED_SERVICE_ENV]
  return dir ? ['--enable-source-maps', `${dir}/${entry.replace(/\.ts$/, '.mjs')}`] : ['--import', 'tsx', entry]
}

export interface WebProcess {
  url: string
  pid: number
  /** The StatsD ports, when STATSD_PORT was given. */
  statsd?: { udpPort: number; tcpPort: number }
  /** Everything the process wrote to stdout so far (JSON log lines). */
  output(): string
  /** Whether the process is still running. */
  alive(): boolean
}

/**
 * A web process of its own (api/server.ts) on `config`'s database and Redis prefix, ended when the test ends;
 * resolves once it listens (and, with STATSD_PORT in `env`, once StatsD listens too).
 */
export function webProcess(
  t: { teardown(fn: () => void): void },
  config: { databaseUrl: string; redisUrl: string; redisPrefix: string },
  env: Record<string, string> = {},
): Promise<WebProcess> {
  const child: ChildProcess = spawn(process.execPath, serviceArgs('api/server.ts'), {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      PORT: '0',
      DATABASE_URL: config.databaseUrl,
      REDIS_URL: config.redisUrl,
      REDIS_PREFIX: config.redisPrefix,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => child.kill('SIGTERM'))
  let out = ''
  let exited = false
  child.once('exit', () => (exited = true))
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8')
      const web = /listening on (http:\/\/[^\s"]+)/.exec(out)
      const statsd = /statsd listening on udp (\d+) and tcp (\d+)/.exec(out)
      if (web && (statsd || env.STATSD_PORT === undefined)) {
        resolve({
          url: web[1],
          pid: child.pid!,
          statsd: statsd ? { udpPort: Number(statsd[1]), tcpPort: Number(statsd[2]) } : undefined,
          output: () => out,
          alive: () => !exited,
        })
      }
    })
    child.once('exit', (code) => reject(new Error(`web process exited (${code}) before listening:\n${out}`)))
  })
}
