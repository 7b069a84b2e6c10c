// Builds the Koa application without listening, so tests can serve it on an ephemeral port.
import Koa from 'koa'
import type { AppContext, AppDeps, AppState } from './context.js'
import { front } from './middleware/front.js'
import { docsRoutes } from './docs.js'
import { createRegistry } from './openapi.js'
import { Routes } from './route.js'
import { alertRoutes } from './routes/alerts.js'
import { analyticsRoutes } from './routes/analytics.js'
import { apiKeyRoutes } from './routes/api-keys.js'
import { authRoutes } from './routes/auth.js'
import { accountRoutes } from './routes/account.js'
import { twoFactorRoutes } from './routes/two-factor.js'
import { dashboardRoutes } from './routes/dashboard.js'
import { embedRoutes } from './routes/embed.js'
import { exportRoutes } from './routes/export.js'
import { healthRoutes } from './routes/health.js'
import { influxRoutes } from './routes/influx.js'
import { promRoutes } from './routes/prom.js'
import { prometheusRoutes } from './routes/prometheus.js'
import { otlpRoutes } from './routes/otlp.js'
import { importRoutes } from './routes/import.js'
import { statAdminRoutes } from './routes/stat-admin.js'
import { legacyRoutes } from './routes/legacy.js'
import { queryRoutes } from './routes/query.js'
import { statRoutes } from './routes/stats.js'
import { writeRoutes } from './routes/writes.js'
import { usageRoutes } from './routes/usage.js'
import { webRoutes } from './web/pages.js'
import { billingRoutes } from './routes/billing.js'
import { anomalyRoutes } from './routes/anomalies.js'
import { dashboardsRoutes } from './routes/dashboards.js'
import { memberRoutes } from './routes/members.js'

/** Every route with its OpenAPI entry; the app serves them and the reference documents them. */
export function createRoutes(): Routes {
  const routes = new Routes(createRegistry())
  healthRoutes(routes)
  docsRoutes(routes)
  authRoutes(routes)
  accountRoutes(routes)
  twoFactorRoutes(routes)
  apiKeyRoutes(routes)
  legacyRoutes(routes)
  writeRoutes(routes)
  influxRoutes(routes)
  promRoutes(routes)
  prometheusRoutes(routes)
  otlpRoutes(routes)
  statRoutes(routes)
  statAdminRoutes(routes)
  embedRoutes(routes)
  exportRoutes(routes)
  dashboardRoutes(routes)
  alertRoutes(routes)
  queryRoutes(routes)
  usageRoutes(routes)
  analyticsRoutes(routes)
  billingRoutes(routes)
  importRoutes(routes)
  anomalyRoutes(routes)
  dashboardsRoutes(routes)
  memberRoutes(routes)
  return routes
}

export function createApp(deps: AppDeps): Koa<AppState, AppContext> {
  const app = new Koa<AppState, AppContext>({ proxy: deps.config.trustProxy })
  app.context.deps = deps
  // Errors after the response started (client gone) are not ours to answer; keep them out of stderr noise.
  app.on('error', (err, ctx) => deps.log.warn('response error', { request_id: ctx?.state?.requestId, error: err }))

  const routes = createRoutes()
  webRoutes(routes.router) // the pages: HTML, not in the API reference

  app.use(front(deps.config.edgeBlockedUserAgents))
  app.use(routes.directRoutes())
  app.use(routes.router.routes())
  app.use(routes.router.allowedMethods())
  return app
}
