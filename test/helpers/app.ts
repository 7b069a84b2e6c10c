// A real API (and, when asked, real workers) on an ephemeral port, against a
// database of its own and a Redis key prefix of its own.
import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { startApi, type RunningApi } from '../../api/server.js'
import { loadConfig, type Config } from '../../shared/config.js'
import { createSql, type Sql } from '../../shared/db.js'
import { createLogger } from '../../shared/log.js'
import { createRedis, deleteKeys } from '../../shared/redis.js'
import { startWorkers, type RunningWorkers } from '../../workers/main.js'
import { createTestDatabase } from './db.js'

export interface TestApp {
  url: string
  config: Config
  /** A connection to this file's database, for assertions on what was stored. */
  sql: Sql
  api: RunningApi
  /** Every JSON log line the API wrote. */
  logs: string[]
  /** Starts another API process-equivalent on the same database and Redis prefix. */
  another(overrides?: Record<string, string | undefined>): Promise<TestApp>
  startWorkers(): Promise<RunningWorkers>
  close(): Promise<void>
}

/** Test settings; an override set to undefined leaves the service's own default. */
function testConfig(databaseUrl: string, prefix: string, overrides: Record<string, string | undefined>): Config {
  return loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_PRIVATE: '1',
    // Every test signs up and in from 127.0.0.1; the throttle's own tests set it back.
    AUTH_ATTEMPTS_PER_CLIENT: '1000000',
    // Hundreds of sign-ups and logins per run: scrypt at N=2^10 (1 MiB) instead of the real 2^15 (32 MiB,
    // tens of ms of CPU each). Only NODE_ENV=test accepts it: an app started as production keeps the real
    // cost, as it must. auth.test.ts checks the default.
    PASSWORD_HASH_COST: (overrides.NODE_ENV ?? 'test') === 'test' ? '10' : undefined,
    ...overrides,
  })
}

async function launch(config: Config, owned: Array<() => Promise<void>>): Promise<TestApp> {
  const logs: string[] = []
  const stream = new PassThrough()
  stream.on('data', (chunk: Buffer) => logs.push(...chunk.toString('utf8').split('\n').filter(Boolean)))
  const log = createLogger(config, stream)
  const api = await startApi(config, log)
  const sql = createSql(config.databaseUrl, { max: 2 })
  const workers: RunningWorkers[] = []
  const others: TestApp[] = []
  return {
    url: api.url,
    config,
    sql,
    api,
    logs,
    async another(overrides = {}) {
      const other = await launch(testConfig(config.databaseUrl, config.redisPrefix, overrides), [])
      others.push(other)
      return other
    },
    async startWorkers() {
      const w = await startWorkers(config, log)
      workers.push(w)
      return w
    },
    async close() {
      for (const o of others) await o.close()
      for (const w of workers) await w.close()
      await api.close()
      await sql.end({ timeout: 1 })
      for (const fn of owned) await fn()
    },
  }
}

/** Starts a test app for one test file; close() it in test.after.always (it drops the database and Redis keys). */
export async function startTestApp(overrides: Record<string, string | undefined> = {}): Promise<TestApp> {
  const db = await createTestDatabase()
  const prefix = `t${randomBytes(5).toString('hex')}`
  const cleanupRedis = async () => {
    const redis = createRedis({ redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })
    try {
      await deleteKeys(redis, `${prefix}:*`)
    } finally {
      redis.disconnect()
    }
  }
  return launch(testConfig(db.url, prefix, overrides), [cleanupRedis, () => db.drop()])
}
