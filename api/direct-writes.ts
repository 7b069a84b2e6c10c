// The common legacy single write answered without Koa (docs/decisions.md §27): a form POST to /ez, /c or /v (or
// their /api aliases), with no query string, Content-Encoding or JSON body, whose every rule this process can
// decide in memory: its key held and fresh, of a scope and role that may write; the point valid, without t or
// ikey; its stat known with the point's kind; a request and a point of the account's leases (the conditions of
// Ingest.inMemorySeries). That is nearly every write of a busy legacy client, and Koa's context, middleware
// chain and response handling were about as much CPU as the write itself.
//
// Anything else, and any refusal, goes to Koa as before, with the body this route read handed on
// (legacy-body.ts HANDED_ON): the same functions then decide and answer it, in the legacy envelope. The route
// decides with the very functions the Koa route calls and takes nothing before it knows the write goes through:
// the request from the rate lease is taken last, once the point's stat and its leased point are seen, and a write
// that then cannot be queued is answered by Koa's error mapping (the point given back, as on the Koa route).
// With METRICS_PORT set, it counts its requests and points in the same series the Koa middleware does.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Account } from '../shared/accounts/repo.js'
import { legacyKeyField } from '../shared/auth/key-resolver.js'
import { validatePoint, type PointRules, type ValidPoint } from '../shared/ingest/point.js'
import type { RateDecision } from '../shared/ingest/limits.js'
import { assertStorableText } from '../shared/ingest/text.js'
import { roleAtLeast } from '../shared/members/roles.js'
import type { ServiceMetrics } from '../shared/metrics/registry.js'
import { planOf } from '../shared/plans.js'
import type { Stat } from '../shared/stats/repo.js'
import type { AppDeps } from './context.js'
import { scopeAllows } from './middleware/auth.js'
import { blockedAgent } from './middleware/edge.js'
import { SECURITY_HEADERS } from './middleware/headers.js'
import { declaresJson, handOn, LEGACY_BODY_LIMIT, parseForm, readBody } from './middleware/legacy-body.js'
import { requestIdOf, requestLine } from './middleware/request-log.js'

interface LegacyRoute {
  statField: 'stat' | 'key'
  keyField: 'ezkey' | 'ukey'
  rules: PointRules
}

// As routes/legacy.ts declares them.
const EZ: LegacyRoute = { statField: 'stat', keyField: 'ezkey', rules: { countDefaultsToOne: true } }
const C: LegacyRoute = { statField: 'key', keyField: 'ukey', rules: { kind: 'counter', countDefaultsToOne: true } }
const V: LegacyRoute = { statField: 'key', keyField: 'ukey', rules: { kind: 'gauge', countDefaultsToOne: true } }
const ROUTES = new Map<string, LegacyRoute>([
  ['/ez', EZ],
  ['/api/ez', EZ],
  ['/c', C],
  ['/api/c', C],
  ['/v', V],
  ['/api/v', V],
])

/** What the Koa route answers an accepted single write: `{"status": 200, "msg": "ok"}`, as JSON. */
const OK_BODY = JSON.stringify({ status: 200, msg: 'ok' })
/**
 * The answer's headers that are the same for every write, as name-value pairs. The headers go to writeHead as a
 * flat array: an object literal of them (a spread and six more names) made V8 build a fresh hidden class and
 * its key cache per answer, about a tenth of the web process's CPU in phase 1 of bench:writes.
 */
const OK_HEADERS: readonly string[] = [
  ...Object.entries(SECURITY_HEADERS).flat(),
  'Access-Control-Allow-Origin',
  '*',
  'Content-Type',
  'application/json; charset=utf-8',
  'Content-Length',
  String(Buffer.byteLength(OK_BODY)),
]

/** Writes this process answered here (tests read it to know the route was taken). */
export const directAnswers = { count: 0 }

/** Whether the request is one this route may try: everything else is Koa's without a look. */
function eligible(req: IncomingMessage, blockedAgents: readonly string[]): boolean {
  const h = req.headers
  const length = h['content-length']
  return (
    length !== undefined &&
    Number(length) <= LEGACY_BODY_LIMIT &&
    h['content-encoding'] === undefined &&
    !declaresJson(h['content-type']) &&
    !blockedAgent(h['user-agent'], blockedAgents)
  )
}

/** `koa` wrapped: legacy single writes this process can decide in memory are answered here, the rest by `koa`. */
export function directWrites(deps: AppDeps, koa: RequestListener, metrics?: ServiceMetrics): RequestListener {
  const blockedAgents = deps.config.edgeBlockedUserAgents
  // Callbacks from the body to the answer, not promises: each promise and continuation was a measurable share
  // of a write that does little else.
  return (req, res) => {
    const route = req.method === 'POST' ? ROUTES.get(req.url ?? '') : undefined
    if (!route || !eligible(req, blockedAgents)) return koa(req, res)
    // Only the log line and the metrics read the start time.
    const started = metrics || deps.log.isLevelEnabled('info') ? process.hrtime.bigint() : undefined
    readBody(
      req,
      () => {},
      (err, raw) => {
        // Koa reads the same failure from the handed-on text and answers it as it always has.
        if (err) return toKoa(koa, req, res, Promise.reject(err))
        let taken: Decided | undefined
        try {
          taken = decide(deps, route, raw!)
        } catch {
          // Nothing is taken before its last step, which cannot throw: Koa decides and answers this one.
        }
        if (!taken) return toKoa(koa, req, res, Promise.resolve(raw!))
        const { account, stat, point, now, rate } = taken
        deps.ingest.queueInMemoryThen(account, stat, point, now, (failed) => {
          if (failed) {
            // The request was taken from the rate: its headers go out with the refusal, as on the Koa route.
            res.setHeader('RateLimit-Limit', String(rate.limit))
            res.setHeader('RateLimit-Remaining', String(rate.remaining))
            res.setHeader('RateLimit-Reset', String(rate.resetSeconds))
            return toKoa(koa, req, res, Promise.resolve(raw!), failed)
          }
          answer(deps, req, res, rate, started, metrics)
        })
      },
    )
  }
}

/** Hands the request to Koa with the body this route read (and the refusal to answer, when it had one). */
function toKoa(koa: RequestListener, req: IncomingMessage, res: ServerResponse, text: Promise<string>, failed?: unknown): void {
  text.catch(() => {}) // legacyBody reads (and answers) a failed read; never left unhandled should Koa not get that far
  handOn(req, { text, failed })
  koa(req, res)
}

interface Decided {
  account: Account
  stat: Stat
  point: ValidPoint
  now: number
  rate: RateDecision
}

/**
 * Decides the write when every rule can be decided here, taking the request from the rate lease last; undefined
 * (nothing taken) when Koa must.
 */
function decide(deps: AppDeps, route: LegacyRoute, raw: string): Decided | undefined {
  const fields = parseForm(raw)
  try {
    assertStorableText(fields, '')
  } catch {
    return undefined
  }
  const presented = legacyKeyField(fields, route.keyField)
  if (!presented || fields[route.statField] === undefined) return undefined
  const key = deps.keys.cached(presented)
  if (!key || !scopeAllows(key.scope, 'POST', true) || !key.role || !roleAtLeast(key.role, 'member')) return undefined
  const now = Math.floor(Date.now() / 1000)
  let point: ValidPoint
  try {
    point = validatePoint(
      { stat: fields[route.statField], count: fields.count, value: fields.value, t: fields.t, ikey: fields.ikey },
      route.rules,
      now,
    )
  } catch {
    return undefined
  }
  const account = key.account
  const stat = deps.ingest.inMemorySeries(account, point)
  if (!stat) return undefined
  const rate = deps.limits.takeLeasedRequest(account.id, planOf(account.plan))
  if (!rate) return undefined
  return { account, stat, point, now, rate }
}

/** The Koa route's answer to an accepted single write, its headers, metrics and log line. */
function answer(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  rate: RateDecision,
  started: bigint | undefined,
  metrics: ServiceMetrics | undefined,
): void {
  const requestId = requestIdOf(req)
  res.writeHead(200, [
    ...OK_HEADERS,
    'X-Request-Id',
    requestId,
    'RateLimit-Limit',
    String(rate.limit),
    'RateLimit-Remaining',
    String(rate.remaining),
    'RateLimit-Reset',
    String(rate.resetSeconds),
  ])
  res.end(OK_BODY)
  directAnswers.count++
  if (started === undefined) return
  if (metrics) {
    // As requestMetrics and countingIngest count the same write on the Koa route.
    const path = req.url ?? ''
    metrics.pointsAccepted.inc({ route: 'single' })
    metrics.httpRequests.inc({ route: path, method: 'POST', code: '200' })
    metrics.httpDuration.observe({ route: path }, Number(process.hrtime.bigint() - started) / 1e9)
  }
  // The line the Koa route writes for it (the legacy routes name no account in it).
  if (deps.log.isLevelEnabled('info'))
    requestLine(deps.log, req, { requestId, url: req.url ?? '', status: 200, started, accountId: undefined })
}
