// The web app's pages: HTML shells rendered here, each loading one bundled
// module that talks to the v1 JSON API with the session cookie and
// X-Service-CSRF (no second set of HTML endpoints). Shells need a session,
// except sign-in and sign-up; without one they redirect to /signin.
import type Router from '@koa/router'
import { resolveSession, SESSION_COOKIE } from '../../shared/auth/sessions.js'
import type { Account } from '../../shared/accounts/repo.js'
import { esc } from '../../shared/html.js'
import { planOf } from '../../shared/plans.js'
import { clampToRetention, RANGE_NAMES, RANGES, resolveWindow, type RangeName } from '../../shared/stats/ranges.js'
import { baseUrl, type AppContext, type AppState, type Ctx } from '../context.js'
import { assets, type Page } from './assets.js'
import { firstPointCurl } from './first-point.js'

/** No inline script or style anywhere; the embed preview is our own page; nothing may frame the app. */
export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

function securityHeaders(ctx: Ctx): void {
  ctx.set('Content-Security-Policy', APP_CSP)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('X-Frame-Options', 'DENY')
  ctx.set('Referrer-Policy', 'same-origin')
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin')
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin')
  ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()')
  if (ctx.deps.config.env === 'production') ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains')
}

const NAV: Array<[string, string, Page[]]> = [
  ['/stats', 'Stats', ['stats', 'stat', 'correlations']],
  ['/dashboards', 'Dashboards', ['dashboards', 'dashboard']],
  ['/alerts', 'Alerts', ['alerts', 'alert']],
  ['/ask', 'Ask', ['ask']],
  ['/anomalies', 'Anomalies', ['anomalies']],
  ['/import', 'Import', ['import']],
  ['/billing', 'Billing', ['billing']],
  ['/keys', 'API keys', ['keys']],
  ['/send', 'Send data', ['send']],
  ['/members', 'Members', ['members']],
  ['/audit', 'Audit', ['audit']],
  ['/account', 'Account', ['account']],
]

interface ShellOptions {
  /** The page's module; none for a page rendered whole here (the landing page). */
  page?: Page
  /** The main element's content when the page is rendered here (already escaped HTML). */
  main?: string
  title: string
  account?: Account
  csrf?: string
  /** Extra data-* attributes for the page's module (already plain strings). */
  data?: Record<string, string>
  /** API reads the module will make first: fetched while the module loads (the module asks for the same URLs). */
  preload?: string[]
}

async function shell(ctx: Ctx, o: ShellOptions): Promise<void> {
  const a = await assets()
  const data = {
    base: baseUrl(ctx),
    ...(o.csrf ? { csrf: o.csrf } : {}),
    ...(o.account ? { plan: o.account.plan, email: o.account.email, ...(o.account.timeZone ? { timeZone: o.account.timeZone } : {}) } : {}),
    ...o.data,
  }
  // data-window-from is read back as dataset.windowFrom (HTML lowercases attribute names: data-windowFrom would not be).
  const attrs = Object.entries(data)
    .map(([k, v]) => ` data-${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${esc(v)}"`)
    .join('')
  const nav = o.account
    ? `<nav aria-label="Main">${NAV.map(([href, label, pages]) => `<a href="${href}"${o.page && pages.includes(o.page) ? ' aria-current="page"' : ''}>${label}</a>`).join('')}<a href="/docs">API reference</a></nav>
<span class="who">${esc(o.account.email)} · ${esc(o.account.plan)} plan</span>`
    : ''
  securityHeaders(ctx)
  ctx.set('Cache-Control', 'no-store') // the shell carries the session's CSRF token
  ctx.type = 'html'
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(o.title)} · Metrics</title><link rel="icon" href="${a.icon}" type="image/svg+xml"><link rel="stylesheet" href="${a.css}">${(o.preload ?? []).map((u) => `<link rel="preload" as="fetch" crossorigin="anonymous" href="${esc(u)}">`).join('')}${o.page ? `<script type="module" src="${a.script[o.page]}"></script>` : ''}</head>
<body${attrs}><header class="top"><a class="brand" href="/">Metrics</a>${nav}</header>
<main id="app">${o.main ?? '<p class="loading">Loading…</p><noscript><p>This page needs JavaScript.</p></noscript>'}</main></body></html>`
}

async function sessionOf(ctx: Ctx) {
  const token = ctx.cookies.get(SESSION_COOKIE)
  return token ? resolveSession(ctx.deps.sql, token) : null
}

/** A page that needs a session: the shell, or a redirect to sign-in that comes back here. */
function signedIn(
  page: Page,
  title: (ctx: Ctx) => string,
  extra: (ctx: Ctx, account: Account) => Pick<ShellOptions, 'data' | 'preload'> = () => ({}),
) {
  return async (ctx: Ctx) => {
    const found = await sessionOf(ctx)
    if (!found) return ctx.redirect(`/signin?next=${encodeURIComponent(ctx.originalUrl)}`)
    await shell(ctx, { page, title: title(ctx), account: found.account, csrf: found.session.csrfToken, ...extra(ctx, found.account) })
  }
}

/**
 * The stat page's two chart reads (this period and the one before), so that the browser fetches them
 * while it loads the module; the module's first reads use the same URLs (same window start) and get
 * the preloaded answers.
 */
function statPage(ctx: Ctx, account: Account): Pick<ShellOptions, 'data' | 'preload'> {
  const name = param(ctx, 'name')
  const asked = typeof ctx.query.range === 'string' ? ctx.query.range : ''
  const range = (RANGE_NAMES as string[]).includes(asked) ? (asked as RangeName) : '24h'
  // Where the read will start: a range longer than the plan keeps starts at its retention, as the API clamps it.
  const now = new Date()
  const w = clampToRetention(resolveWindow({ range }, now), planOf(account.plan).retentionDays, now)
  const path = `/api/v1/stats/${encodeURIComponent(name)}`
  const prevFrom = new Date(w.from.getTime() - RANGES[range].seconds * 1000)
  return {
    data: { stat: name, windowFrom: String(w.from.getTime()) },
    preload: [`${path}?range=${range}`, `${path}?from=${prevFrom.toISOString()}&to=${w.from.toISOString()}`],
  }
}

/** The signed-out landing page: what the service does, one example write, and the ways in. No script. */
function landing(base: string): string {
  const free = planOf('free')
  return `<div class="landing">
<h1>Metrics: counters and gauges over HTTP</h1>
<p>Send a number with one HTTP request; the service keeps it, charts it, alerts on it and answers questions
about it. Counters add up (sign-ups, requests), gauges keep a level (queue depth, latency). Old clients of the
predecessor's <code>/ez</code>, <code>/c</code> and <code>/v</code> endpoints keep working unchanged.</p>
<h2>One write</h2>
<p>With an API key from your account, this adds 1 to a counter named <code>signups</code>, created by its first write:</p>
<pre data-testid="example-write">${esc(firstPointCurl(base, 'mk_...'))}</pre>
<p>Then open <strong>Stats</strong> to see it arrive and chart it; set an alert on it, share a chart, export it, or ask
&ldquo;how many signups yesterday?&rdquo;.</p>
<div class="actions"><a class="button" href="/signup">Sign up (free)</a><a class="button secondary" href="/signin">Sign in</a><a href="/docs">API reference</a></div>
<p class="muted small">Free plan: ${free.trackedStats} stats, ${free.pointsPerDay.toLocaleString('en-US')} points a day, no card.</p>
</div>`
}

/**
 * A page rendered whole here for a person arriving from a mailed link (the address confirmation): the app's
 * shell, stylesheet and icon, with the navigation when a session is open (it was bare HTML).
 * `main` is already escaped HTML.
 */
export async function messagePage(ctx: Ctx, title: string, main: string): Promise<void> {
  const found = await sessionOf(ctx)
  await shell(ctx, { title, main: `<div class="landing">${main}</div>`, ...(found ? { account: found.account } : {}) })
}

const param = (ctx: Ctx, name: string) => (ctx as unknown as { params: Record<string, string> }).params[name]

export function webRoutes(router: Router<AppState, AppContext>): void {
  // The payment provider sends people back to /?billing=updated|cancelled: that belongs on the billing page.
  // Signed in: the stats. Signed out: a page of its own that says what the service is.
  router.get('/', async (ctx) => {
    const back = ctx.query.billing === 'updated' || ctx.query.billing === 'cancelled' ? `/billing?billing=${ctx.query.billing}` : '/stats'
    if (await sessionOf(ctx)) return ctx.redirect(back)
    const deleted = ctx.query.deleted === '1' ? '<p class="notice ok" role="status">Your account and all of its data were deleted.</p>' : ''
    await shell(ctx, { title: 'Counters and gauges over HTTP', main: deleted + landing(baseUrl(ctx)) })
  })
  for (const path of ['/signin', '/signup']) {
    router.get(path, async (ctx) => {
      if (await sessionOf(ctx)) return ctx.redirect('/stats')
      await shell(ctx, { page: 'signin', title: path === '/signup' ? 'Create an account' : 'Sign in', data: { mode: path.slice(1) } })
    })
  }
  // Signed in or not: a mailed link must open wherever it is clicked. The token stays in the page (Referrer-Policy same-origin).
  router.get('/reset', async (ctx) => {
    await shell(ctx, { page: 'reset', title: 'Reset your password' })
  })
  router.get(
    '/stats',
    signedIn('stats', () => 'Stats'),
  )
  router.get(
    '/stats/:name/correlations',
    signedIn(
      'correlations',
      (ctx) => `What moved with ${param(ctx, 'name')}`,
      (ctx) => ({ data: { stat: param(ctx, 'name') } }),
    ),
  )
  router.get(
    '/stats/:name',
    signedIn('stat', (ctx) => param(ctx, 'name'), statPage),
  )
  router.get(
    '/dashboards',
    signedIn('dashboards', () => 'Dashboards'),
  )
  // The first read the module makes (no ?range: the dashboard's own) is fetched while the module loads.
  router.get(
    '/dashboards/:id',
    signedIn(
      'dashboard',
      () => 'Dashboard',
      (ctx) => ({
        data: { dashboard: param(ctx, 'id') },
        preload: typeof ctx.query.range === 'string' ? [] : [`/api/v1/dashboards/${encodeURIComponent(param(ctx, 'id'))}/data`],
      }),
    ),
  )
  // Which webhook targets this deployment takes: the form's hint says what is true here.
  router.get(
    '/alerts',
    signedIn(
      'alerts',
      () => 'Alerts',
      (ctx) => {
        const c = ctx.deps.config
        return { data: { webhookTargets: c.webhookAllowPrivate ? 'private' : c.webhookAllowLoopback ? 'loopback' : 'public' } }
      },
    ),
  )
  router.get(
    '/alerts/:id',
    signedIn(
      'alert',
      () => 'Alert',
      (ctx) => ({ data: { alert: param(ctx, 'id') } }),
    ),
  )
  router.get(
    '/ask',
    signedIn('ask', () => 'Ask'),
  )
  router.get(
    '/anomalies',
    signedIn('anomalies', () => 'Anomalies'),
  )
  router.get(
    '/import',
    signedIn('import', () => 'Import'),
  )
  router.get(
    '/billing',
    signedIn('billing', () => 'Billing'),
  )
  router.get(
    '/keys',
    signedIn('keys', () => 'API keys'),
  )
  router.get(
    '/members',
    signedIn('members', () => 'Members'),
  )
  router.get(
    '/audit',
    signedIn('audit', () => 'Audit log'),
  )
  // The invitation mail's link: sign in (or up) first, then back here with the token.
  router.get(
    '/invitation',
    signedIn('invitation', () => 'Invitation'),
  )
  // The StatsD port goes to the page: its set-up names it, or says StatsD is off.
  router.get(
    '/send',
    signedIn(
      'send',
      () => 'Send data',
      (ctx) => {
        const port = ctx.deps.config.statsdPort
        const data: Record<string, string> = port === undefined ? {} : { statsdPort: String(port) }
        return { data }
      },
    ),
  )
  router.get(
    '/account',
    signedIn('account', () => 'Account'),
  )
  // Browsers ask for /favicon.ico wherever a page names no icon (a JSON route, the API reference): the same icon
  // as the shell's, so that no page logs a 404. SVG under that name is read by its type.
  router.get('/favicon.ico', async (ctx) => {
    const icon = (await assets()).files.get('icon.svg')!
    securityHeaders(ctx)
    ctx.set('Cache-Control', 'public, max-age=86400')
    ctx.type = icon.type
    ctx.body = icon.body
  })
  router.get('/assets/:file', async (ctx) => {
    const file = (await assets()).files.get(param(ctx, 'file'))
    if (!file) return // the errors middleware answers the 404
    securityHeaders(ctx)
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable')
    ctx.type = file.type
    ctx.vary('Accept-Encoding')
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip')
      ctx.body = file.gzip
    } else {
      ctx.body = file.body
    }
  })
}
