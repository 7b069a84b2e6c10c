// The Prometheus-compatible read API (docs/decisions.md §25) under /prometheus/api/v1/, so that Grafana's
// built-in Prometheus data source, promtool and Prometheus client libraries read the service with its URL and a
// key (Bearer, or the Basic password). Parameters come from the query string and, on POST, from a form body,
// read here with URLSearchParams so that `match[]` keeps its brackets. Answers and errors are Prometheus' JSON
// envelope (api/middleware/errors.ts, sendPrometheusError).
import { z } from 'zod'
import { AppError } from '../../shared/errors.js'
import { labelNames, labelValues, metadataOf, parseStep, parseTime, seriesMatching, unescapeLabelName } from '../../shared/promql/api.js'
import { instantQuery, rangeQuery } from '../../shared/promql/engine.js'
import { PromQLError } from '../../shared/promql/parse.js'
import { statsSource } from '../../shared/promql/source.js'
import type { Ctx, Middleware } from '../context.js'
import { protocolAccount } from '../protocol-auth.js'
import { readProtocolBody } from '../protocol-body.js'
import type { Routes } from '../route.js'

export const PROMETHEUS_PREFIX = '/prometheus/api/v1'
/** A form body: Grafana posts long queries and many match[] this way; a megabyte is far past any of them. */
const FORM_LIMIT = 1024 * 1024

/** The version Grafana's heuristics read: a 2.x Prometheus with match[] on label values (>= 2.24). */
const BUILD_INFO = {
  version: '2.53.0',
  revision: 'ezstats',
  branch: 'HEAD',
  buildUser: 'ezstats',
  buildDate: '20260101-00:00:00',
  goVersion: 'go1.22',
}

async function paramsOf(ctx: Ctx): Promise<URLSearchParams> {
  const params = new URLSearchParams(ctx.querystring)
  if (ctx.method === 'POST') {
    if (ctx.request.length && !ctx.is('application/x-www-form-urlencoded'))
      throw new AppError(
        'unsupported_media_type',
        'unsupported_media_type',
        `a POST body must be a form (application/x-www-form-urlencoded), got ${ctx.get('content-type') || 'none'}`,
      )
    const body = await readProtocolBody(ctx, FORM_LIMIT, true)
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) params.append(k, v)
  }
  return params
}

function handler(fn: (ctx: Ctx, params: URLSearchParams, accountId: string) => Promise<unknown>): Middleware {
  return async (ctx) => {
    ctx.state.prometheus = true
    const account = await protocolAccount(ctx, false, 'read')
    const params = await paramsOf(ctx)
    const data = await fn(ctx, params, account.id)
    ctx.body = { status: 'success', data }
    ctx.type = 'application/json'
  }
}

const sourceOf = (ctx: Ctx) => statsSource((fn) => ctx.deps.reads.run(fn))
const matchOf = (p: URLSearchParams) => [...p.getAll('match[]'), ...p.getAll('match')]
const optionalTime = (p: URLSearchParams, name: string) => (p.get(name) ? parseTime(p.get(name), name) : undefined)

function required(p: URLSearchParams, name: string): string {
  const v = p.get(name)
  if (!v) throw new PromQLError(`invalid parameter "${name}": missing`)
  return v
}

const query = handler((ctx, p, accountId) =>
  instantQuery(sourceOf(ctx), accountId, required(p, 'query'), parseTime(p.get('time'), 'time', Date.now() / 1000)),
)

const queryRange = handler((ctx, p, accountId) => {
  const start = parseTime(p.get('start'), 'start')
  const end = parseTime(p.get('end'), 'end')
  if (end < start) throw new PromQLError('invalid parameter "end": end timestamp must not be before start time')
  return rangeQuery(sourceOf(ctx), accountId, required(p, 'query'), start, end, parseStep(p.get('step')))
})

const series = handler(async (ctx, p, accountId) => {
  const match = matchOf(p)
  if (!match.length) throw new PromQLError('no match[] parameter provided')
  return (await seriesMatching(sourceOf(ctx), accountId, match, optionalTime(p, 'start'), optionalTime(p, 'end'))).map((s) => s.labels)
})

const labels = handler(async (ctx, p, accountId) =>
  labelNames(await seriesMatching(sourceOf(ctx), accountId, matchOf(p), optionalTime(p, 'start'), optionalTime(p, 'end'))),
)

const values = handler(async (ctx, p, accountId) => {
  const name = unescapeLabelName(decodeURIComponent((ctx as unknown as { params: { name: string } }).params.name))
  return labelValues(await seriesMatching(sourceOf(ctx), accountId, matchOf(p), optionalTime(p, 'start'), optionalTime(p, 'end')), name)
})

const metadata = handler(async (ctx, p, accountId) => {
  const metric = p.get('metric')
  const limit = p.get('limit') ? Number(p.get('limit')) : null
  if (limit !== null && !Number.isInteger(limit)) throw new PromQLError('invalid parameter "limit": not an integer')
  const list = await sourceOf(ctx).selectSeries(accountId, metric ? [{ name: '__name__', op: '=', value: metric }] : [])
  return metadataOf(list, limit)
})

const buildinfo = handler(async () => BUILD_INFO)

export function prometheusRoutes(routes: Routes): void {
  const both: Array<[string, Middleware, string]> = [
    ['/query', query, 'An instant PromQL query at `time` (default now)'],
    ['/query_range', queryRange, 'A PromQL range query: `start`, `end`, `step`'],
    ['/series', series, 'The label sets of the series matching `match[]`'],
    ['/labels', labels, 'Every label name (of the series matching `match[]`, when given)'],
  ]
  for (const [path, mw, summary] of both) {
    routes.router.get(PROMETHEUS_PREFIX + path, mw as never)
    routes.router.post(PROMETHEUS_PREFIX + path, mw as never)
    for (const method of ['get', 'post'] as const) document(routes, method, path, summary)
  }
  routes.router.get(`${PROMETHEUS_PREFIX}/label/:name/values`, values as never)
  document(routes, 'get', '/label/{name}/values', "A label's values (of the series matching `match[]`, when given)")
  routes.router.get(`${PROMETHEUS_PREFIX}/metadata`, metadata as never)
  document(routes, 'get', '/metadata', 'Each metric name with its type (counter or gauge), help (the description) and unit')
  routes.router.get(`${PROMETHEUS_PREFIX}/status/buildinfo`, buildinfo as never)
  document(routes, 'get', '/status/buildinfo', 'The Prometheus version this API answers as (for Grafana)')
}

const Envelope = z
  .object({
    status: z.enum(['success', 'error']),
    data: z.unknown().optional(),
    errorType: z.string().optional(),
    error: z.string().optional(),
    warnings: z.array(z.string()).optional(),
  })
  .meta({
    id: 'PrometheusResponse',
    description:
      "Prometheus' JSON envelope (https://prometheus.io/docs/prometheus/latest/querying/api/): `data` on success; `errorType` (bad_data, execution, not_found, unavailable, internal) and `error` on failure",
  })

const PARAMS: Record<string, string> = {
  '/query': 'query, time, timeout',
  '/query_range': 'query, start, end, step, timeout',
  '/series': 'match[] (at least one), start, end',
  '/labels': 'match[], start, end',
  '/label/{name}/values': 'match[], start, end',
  '/metadata': 'metric, limit',
  '/status/buildinfo': 'none',
}

function document(routes: Routes, method: 'get' | 'post', path: string, summary: string): void {
  const words = path.split(/[^A-Za-z0-9]+/).filter((w) => w && w !== 'name')
  routes.registry.registerPath({
    method,
    path: PROMETHEUS_PREFIX + path,
    operationId: `${method}Prometheus${words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')}`,
    tags: ['prometheus'],
    summary,
    description: `Parameters (${PARAMS[path]}) in the query string${method === 'post' ? ' or an application/x-www-form-urlencoded body' : ''}, as Prometheus takes them. Times are RFC 3339 or Unix seconds; durations like 5m or float seconds.`,
    security: [{ bearerAuth: [] }, { basicAuth: [] }],
    ...(path.includes('{name}') ? { request: { params: z.object({ name: z.string() }) } } : {}),
    responses: {
      200: { description: 'Success', content: { 'application/json': { schema: Envelope } } },
      ...Object.fromEntries(
        [400, 401, 422, 429, 503].map((s) => [
          s,
          {
            description:
              s === 400
                ? 'bad_data: a missing or bad parameter, or a query outside the supported PromQL (named in `error`)'
                : s === 422
                  ? 'execution: a query that cannot be evaluated (many-to-many matching)'
                  : s === 401
                    ? 'Missing or invalid key'
                    : s === 429
                      ? 'Rate limited'
                      : 'A dependency is down',
            content: { 'application/json': { schema: Envelope } },
          },
        ]),
      ),
    },
  })
}
