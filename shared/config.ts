// Configuration is read from the environment once, validated, and frozen.
// Nothing else in the project reads process.env: pass a Config around instead.
import { z } from 'zod'

const flag = z.enum(['0', '1', 'true', 'false', '']).transform((v) => v === '1' || v === 'true')
const int = (min: number) => z.coerce.number().int().min(min)

const Env = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(0).max(65535).default(3000),
  DATABASE_URL: z.string().url().default('postgres://localhost/metrics'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  // Prefix of every Redis key the service writes (queues included), so that
  // several deployments or test files can share one Redis server.
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_.:-]+$/).default('metrics'),
  PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['error', 'warn', 'info', 'debug', 'silent']).default('info'),
  WEBHOOK_ALLOW_PRIVATE: flag.default(false),
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
  SMTP_URL: z.string().regex(/^smtps?:\/\//, { error: 'must be an smtp:// or smtps:// URL' }).optional(),
  MAIL_FROM: z.string().default('Metrics alerts <alerts@localhost>'),
})

export type Config = Readonly<{
  env: 'development' | 'production' | 'test'
  port: number
  databaseUrl: string
  redisUrl: string
  redisPrefix: string
  publicUrl: string | undefined
  logLevel: 'error' | 'warn' | 'info' | 'debug' | 'silent'
  webhookAllowPrivate: boolean
  alertEvalIntervalSeconds: number
  freeTierSlots: number
  edgeBlockedUserAgents: readonly string[]
  sessionTtlHours: number
  trustProxy: boolean
  shutdownTimeoutMs: number
  healthQueueStuckSeconds: number
  smtpUrl: string | undefined
  mailFrom: string
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
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    publicUrl: e.PUBLIC_URL,
    logLevel: e.LOG_LEVEL,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    alertEvalIntervalSeconds: e.ALERT_EVAL_INTERVAL_SECONDS,
    freeTierSlots: e.FREE_TIER_SLOTS,
    edgeBlockedUserAgents: Object.freeze(e.EDGE_BLOCKED_USER_AGENTS.split(',').map((s) => s.trim()).filter(Boolean)),
    sessionTtlHours: e.SESSION_TTL_HOURS,
    trustProxy: e.TRUST_PROXY,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    healthQueueStuckSeconds: e.HEALTH_QUEUE_STUCK_SECONDS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
  })
}

/** Loads the config for a process entry point, exiting with a readable message when it is bad. */
export function loadConfigOrExit(): Config {
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
