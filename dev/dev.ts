// `npm run dev`: finds (or starts) PostgreSQL and Redis, creates the database
// if missing, migrates, and runs the API and the workers in this one process.
import { startApi } from '../api/server.js'
import { startWorkers } from '../workers/main.js'
import { startDevBilling, type DevBilling } from './billing-standin/dev.js'
import { loadConfigOrExit } from '../shared/config.js'
import { createSql, databaseName, withDatabase } from '../shared/db.js'
import { createLogger } from '../shared/log.js'
import { ensureDatabase, migrate } from '../shared/migrate.js'
import { ensureServices, type Services } from './services.js'
import { onShutdown } from '../shared/shutdown.js'

const config = loadConfigOrExit()
const log = createLogger(config).child({ component: 'dev' })
let services: Services | undefined
let billing: DevBilling | undefined

try {
  services = await ensureServices(config, (line) => log.info(line))

  const admin = createSql(withDatabase(config.databaseUrl, 'postgres'), { max: 1, applicationName: 'metrics-dev' })
  try {
    if (await ensureDatabase(admin, databaseName(config.databaseUrl))) log.info(`created database ${databaseName(config.databaseUrl)}`)
  } finally {
    await admin.end({ timeout: 2 })
  }
  const sql = createSql(config.databaseUrl, { max: 1, applicationName: 'metrics-migrate', statementTimeoutSeconds: 0 })
  try {
    const applied = await migrate(sql, (line) => log.info(line))
    log.info(applied.length ? `migrated: ${applied.length} applied` : 'migrated: up to date')
  } finally {
    await sql.end({ timeout: 2 })
  }

  billing = await startDevBilling(config, (line) => log.info(line))
  if (!config.smtpUrl && config.mailOutboxDir)
    log.info(`no SMTP_URL: mail is written to ${config.mailOutboxDir}/ and its links printed here`)
  // StatsD is on in development (docs/decisions.md §21), on the port StatsD clients send to by default.
  // So are the service's own metrics (docs/decisions.md §26), on the port Prometheus' exporters conventionally use.
  const devConfig = { ...billing.config, metricsPort: billing.config.metricsPort ?? 9464 }
  const api = await startApi({ ...devConfig, statsdPort: devConfig.statsdPort ?? 8125 }, log.child({ component: 'web' }))
  const workers = await startWorkers(devConfig, log.child({ component: 'worker' }))
  billing.attach(api.url)
  const running = services
  const standin = billing
  onShutdown(
    log,
    config.shutdownTimeoutMs,
    () => api.close(),
    () => workers.close(),
    () => standin.stop(),
    () => running.stop(),
  )
  // On a terminal's Ctrl-C, tsx (our parent) may miss that we got the signal and send it again; without a listener
  // left (onShutdown listens once) that second one would kill us mid-shutdown. The shutdown deadline still applies.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {})
  process.stdout.write(`\nMetrics service running at ${api.url}  (API reference: ${api.url}/docs)\n\n`)
} catch (err) {
  process.stderr.write(`\nnpm run dev could not start: ${(err as Error).message}\n`)
  await billing?.stop()
  await services?.stop()
  process.exit(1)
}
