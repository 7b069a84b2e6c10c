// Configuration is read from the environment once, validated, and frozen.
// Nothing else in the project reads process.env: pass a Config around instead.
import { existsSync } from 'node:fs'
import { z } from 'zod'
import { validRedisUrl } from './redis-url.js'

const flag = z.enum(['0', '1', 'true', 'false', '']).transform((v) => v === '1' || v === 'true')
const int = (min: number) => z.coerce.number().int().min(min)

/** The shortest hot window HOT_WINDOW_MINUTES takes (the compaction's marks are set by it: behindEdge). */
export const MIN_HOT_WINDOW_MINUTES = 10
/** The real scrypt cost (N = 2^15): the lowest a deployment may run with. */
export const PASSWORD_HASH_COST = 15
/** The highest scrypt cost accepted: 2^17 is 128 MiB per hash. */
export const PASSWORD_HASH_COST_MAX = 17

const Env = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(0).max(65535).default(3000),
  // StatsD and DogStatsD over UDP and TCP on this port (docs/decisions.md §21); unset: off. npm run dev uses 8125. 0 picks free ports.
  STATSD_PORT: int(0).max(65535).optional(),
  // The service's own metrics in Prometheus' format at /metrics on this port (docs/decisions.md §26); unset: off. Never PORT.
  METRICS_PORT: int(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().url().default('postgres://localhost/metrics'),
  // A streaming replica for chart, export, dashboard and analytics reads (docs/decisions.md §22); unset: the primary.
  DATABASE_READ_URL: z.string().url().optional(),
  // A replica further behind the primary than this is bypassed until it catches up.
  READ_REPLICA_MAX_LAG_SECONDS: z.coerce.number().positive().default(5),
  // A single node (redis:// or rediss://), or a Redis Cluster given by seed nodes: redis+cluster://host:port[,host:port...]
  REDIS_URL: z
    .string()
    .refine(validRedisUrl, { error: 'must be a redis:// or rediss:// URL, or redis+cluster://host:port[,host:port...]' })
    .default('redis://127.0.0.1:6379'),
  // Prefix of every Redis key the service writes (queues included), so that
  // several deployments or test files can share one Redis server.
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/)
    .default('metrics'),
  PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['error', 'warn', 'info', 'debug', 'silent']).default('info'),
  // JSON lines for log collectors; short readable lines for a person at a terminal. Default: pretty in development.
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  // Unset in development: loopback targets are allowed (local receivers), nothing else private.
  WEBHOOK_ALLOW_PRIVATE: flag.optional(),
  ALERT_EVAL_INTERVAL_SECONDS: int(1).default(15),
  FREE_TIER_SLOTS: int(0).default(250),
  // An empty string means "block nothing", so it must stay distinguishable from unset.
  EDGE_BLOCKED_USER_AGENTS: z.string().default('Python-urllib/,libwww-perl/'),
  SESSION_TTL_HOURS: int(1).default(24 * 14),
  // Trust X-Forwarded-* from the platform router (Heroku-style); off when exposed directly.
  TRUST_PROXY: flag.default(false),
  SHUTDOWN_TIMEOUT_MS: int(100).default(10_000),
  // Health fails when a job has been ready to run, or running, for longer than this: the workers are stuck or gone.
  HEALTH_QUEUE_STUCK_SECONDS: int(1).default(60),
  // Alert e-mail (confirmation links and deliveries). Without it, e-mail alerts cannot be created.
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, { error: 'must be an smtp:// or smtps:// URL' })
    .optional(),
  MAIL_FROM: z.string().default('Metrics alerts <alerts@localhost>'),
  // Plain-language query: an optional OpenAI-compatible chat-completions server that narrates verified facts.
  QUERY_LLM_BASE_URL: z.string().url().optional(),
  QUERY_LLM_API_KEY: z.string().optional(),
  QUERY_LLM_MODEL: z.string().optional(),
  QUERY_LLM_TIMEOUT_MS: int(50).default(4_000),
  // Sign-in attempts per e-mail address, and sign-in or sign-up attempts per client address, before each
  // further attempt waits a delay growing from 1 s to 1 min (shared/auth/throttle.ts).
  AUTH_ATTEMPTS_PER_ADDRESS: int(1).default(5),
  AUTH_ATTEMPTS_PER_CLIENT: int(1).default(30),
  // Without SMTP_URL outside production, mail is written here as .eml files (docs/decisions.md §15). Development defaults to .data/outbox.
  MAIL_OUTBOX_DIR: z.string().min(1).optional(),
  // Billing (docs/decisions.md §14). Without the secret key, checkout and portal answer 503 naming it.
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  STRIPE_PRICE_STARTER: z.string().min(1).optional(),
  STRIPE_PRICE_PRO: z.string().min(1).optional(),
  STRIPE_PRICE_BUSINESS: z.string().min(1).optional(),
  // Only to point the SDK at another server (the local stand-in): http(s)://host[:port].
  STRIPE_API_BASE: z.string().url().optional(),
  // Anomaly detection (docs/decisions.md §11): the sweep's schedule, and when a stat's rollup counts as stale.
  ANOMALY_SWEEP_INTERVAL_SECONDS: int(1).default(300),
  ANOMALY_STALE_AFTER_SECONDS: int(1).default(900),
  // How often hot points older than the hot window are compacted into blocks. A pass with nothing to do
  // costs one small statement (compactionPasses); at most 300 so that the hot table holds little more than the window.
  COMPACTION_INTERVAL_SECONDS: int(1).max(300).default(300),
  // How many minutes of the newest points stay rows (docs/decisions.md §27): older ones move into blocks,
  // a few bytes a point rather than about 130. At least MIN_HOT_WINDOW_MINUTES, at most two days.
  HOT_WINDOW_MINUTES: int(MIN_HOT_WINDOW_MINUTES).max(2880).default(60),
  // Megabytes of decoded day blobs of rollups each process keeps between reads (shared/stats/day-cache.ts); 0: none.
  // 64 holds a month of five-minute days of about 300 series.
  ROLLUP_CACHE_MB: int(0).max(4096).default(64),
  // How long a client may take to send a whole request (headers and body): API bodies are small, so a
  // body still arriving after this is a slow client holding a connection, and is cut (408).
  HTTP_REQUEST_TIMEOUT_MS: int(500).default(20_000),
  // How long a worker's hold on a job lasts unless renewed (every half of it): a worker that dies mid-job has its
  // jobs run by another one this long after. Shorter recovers sooner, but a worker whose event loop stalls longer
  // than half of it loses its jobs to another worker (harmless, the jobs are idempotent, yet wasted work).
  JOB_LOCK_SECONDS: int(1).default(15),
  // scrypt's cost for new password hashes, as a power of two (N = 2^cost; 15 is 32 MiB and tens of ms per hash).
  // Security by default: below 15 is refused unless NODE_ENV=test, where it only keeps the suite's many sign-ups cheap.
  PASSWORD_HASH_COST: int(4).max(PASSWORD_HASH_COST_MAX).default(PASSWORD_HASH_COST),
  // Benchmark instrumentation (shared/io-counts.ts): the web process counts its PostgreSQL round trips and Redis
  // commands and prints them on SIGUSR2. Off unless a benchmark turns it on.
  IO_COUNTS: flag.default(false),
})

export type Config = Readonly<{
  env: 'development' | 'production' | 'test'
  port: number
  /** StatsD/DogStatsD UDP and TCP port; undefined: no listener. */
  statsdPort: number | undefined
  /** /metrics listener's port; undefined: no listener, no counting. */
  metricsPort: number | undefined
  metricsHost: string
  databaseUrl: string
  databaseReadUrl: string | undefined
  readReplicaMaxLagSeconds: number
  redisUrl: string
  redisPrefix: string
  publicUrl: string | undefined
  logLevel: 'error' | 'warn' | 'info' | 'debug' | 'silent'
  logFormat: 'json' | 'pretty'
  webhookAllowPrivate: boolean
  /** Loopback webhook targets allowed: with WEBHOOK_ALLOW_PRIVATE=1, and in development unless it is set to 0. */
  webhookAllowLoopback: boolean
  alertEvalIntervalSeconds: number
  freeTierSlots: number
  edgeBlockedUserAgents: readonly string[]
  sessionTtlHours: number
  trustProxy: boolean
  shutdownTimeoutMs: number
  healthQueueStuckSeconds: number
  smtpUrl: string | undefined
  mailFrom: string
  queryLlm: Readonly<{ baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number }> | undefined
  authAttemptsPerAddress: number
  authAttemptsPerClient: number
  mailOutboxDir: string | undefined
  stripe: Readonly<{
    secretKey: string | undefined
    webhookSecret: string | undefined
    prices: Readonly<{ starter: string | undefined; pro: string | undefined; business: string | undefined }>
    apiBase: string | undefined
  }>
  anomalySweepIntervalSeconds: number
  compactionIntervalSeconds: number
  hotWindowMinutes: number
  /** Bytes of decoded day blobs a process keeps (ROLLUP_CACHE_MB). */
  rollupCacheBytes: number
  anomalyStaleAfterSeconds: number
  httpRequestTimeoutMs: number
  /** A worker's job lock; the stalled-job check runs three times as often. */
  jobLockSeconds: number
  /** scrypt cost of new password hashes (N = 2^cost); below PASSWORD_HASH_COST only with NODE_ENV=test. */
  passwordHashCost: number
  /** Count PostgreSQL round trips and Redis commands, printed on SIGUSR2 (benchmarks only). */
  ioCounts: boolean
}>

/** Thrown when the environment holds a bad value; the message names every bad variable. */
export class ConfigError extends Error {}

/** Parses the environment (or an override map, in tests) into a frozen Config. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = Env.safeParse(env)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`)
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`)
  }
  const e = parsed.data
  if (e.QUERY_LLM_BASE_URL && !e.QUERY_LLM_MODEL)
    throw new ConfigError('invalid configuration:\n  QUERY_LLM_MODEL: required when QUERY_LLM_BASE_URL is set')
  // Links (embed URLs, e-mail confirmations) are built from PUBLIC_URL in production, never from a request's Host.
  if (e.NODE_ENV === 'production' && !e.PUBLIC_URL) {
    throw new ConfigError(
      'invalid configuration:\n  PUBLIC_URL: required in production (the base of links the service hands out, e.g. https://metrics.example.com)',
    )
  }
  // The metrics say how full the queues are and how busy the database is: not for the public port's clients.
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError(
      `invalid configuration:\n  METRICS_PORT: must differ from PORT (the metrics are never served on the public port) (got ${e.METRICS_PORT})`,
    )
  }
  if (e.PASSWORD_HASH_COST < PASSWORD_HASH_COST && e.NODE_ENV !== 'test') {
    throw new ConfigError(
      `invalid configuration:\n  PASSWORD_HASH_COST: below ${PASSWORD_HASH_COST} only in tests (NODE_ENV=test); passwords stored with a cheaper hash are cheaper to crack (got ${e.PASSWORD_HASH_COST})`,
    )
  }
  // The stand-in exists for development and tests; in production the SDK talks to the provider itself, so
  // a base URL there could only send the secret key and customers' payment calls to another server.
  if (e.NODE_ENV === 'production' && e.STRIPE_API_BASE) {
    throw new ConfigError(
      'invalid configuration:\n  STRIPE_API_BASE: refused in production (it points the payment SDK at a local stand-in, for development and tests only)',
    )
  }
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    statsdPort: e.STATSD_PORT,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    readReplicaMaxLagSeconds: e.READ_REPLICA_MAX_LAG_SECONDS,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    publicUrl: e.PUBLIC_URL,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ?? (e.NODE_ENV === 'development' ? 'pretty' : 'json'),
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE ?? false,
    webhookAllowLoopback: e.WEBHOOK_ALLOW_PRIVATE ?? e.NODE_ENV === 'development',
    alertEvalIntervalSeconds: e.ALERT_EVAL_INTERVAL_SECONDS,
    freeTierSlots: e.FREE_TIER_SLOTS,
    edgeBlockedUserAgents: Object.freeze(
      e.EDGE_BLOCKED_USER_AGENTS.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    sessionTtlHours: e.SESSION_TTL_HOURS,
    trustProxy: e.TRUST_PROXY,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    healthQueueStuckSeconds: e.HEALTH_QUEUE_STUCK_SECONDS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    queryLlm: e.QUERY_LLM_BASE_URL
      ? Object.freeze({
          baseUrl: e.QUERY_LLM_BASE_URL.replace(/\/+$/, ''),
          apiKey: e.QUERY_LLM_API_KEY || undefined,
          model: e.QUERY_LLM_MODEL!,
          timeoutMs: e.QUERY_LLM_TIMEOUT_MS,
        })
      : undefined,
    authAttemptsPerAddress: e.AUTH_ATTEMPTS_PER_ADDRESS,
    authAttemptsPerClient: e.AUTH_ATTEMPTS_PER_CLIENT,
    // Production never writes mail to a folder: without SMTP_URL it refuses e-mail alerts instead.
    mailOutboxDir:
      e.NODE_ENV === 'production' ? undefined : (e.MAIL_OUTBOX_DIR ?? (e.NODE_ENV === 'development' ? '.data/outbox' : undefined)),
    stripe: Object.freeze({
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      prices: Object.freeze({ starter: e.STRIPE_PRICE_STARTER, pro: e.STRIPE_PRICE_PRO, business: e.STRIPE_PRICE_BUSINESS }),
      apiBase: e.STRIPE_API_BASE,
    }),
    anomalySweepIntervalSeconds: e.ANOMALY_SWEEP_INTERVAL_SECONDS,
    compactionIntervalSeconds: e.COMPACTION_INTERVAL_SECONDS,
    hotWindowMinutes: e.HOT_WINDOW_MINUTES,
    rollupCacheBytes: e.ROLLUP_CACHE_MB * 1024 * 1024,
    anomalyStaleAfterSeconds: e.ANOMALY_STALE_AFTER_SECONDS,
    httpRequestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    jobLockSeconds: e.JOB_LOCK_SECONDS,
    passwordHashCost: e.PASSWORD_HASH_COST,
    ioCounts: e.IO_COUNTS,
  })
}

/** Every setting the service reads (`.env.example` lists each with its default; a test keeps the two in step). */
export const SETTINGS = Object.keys(Env.shape)

/**
 * Reads `.env` from the working directory into process.env when the file exists. Variables already
 * set in the environment win, so a one-off `PORT=4000 npm run dev` still works.
 */
export function readEnvFile(path = '.env'): boolean {
  if (!existsSync(path)) return false
  process.loadEnvFile(path)
  return true
}

/** Loads the config for a process entry point (after `.env`), exiting with a readable message when it is bad. */
export function loadConfigOrExit(): Config {
  readEnvFile()
  try {
    return loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw err
  }
}
