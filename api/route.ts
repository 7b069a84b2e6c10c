// Declares a route once: the Koa handler, its validation and its OpenAPI entry
// all come from the same zod schemas, so the document cannot drift from what
// the route accepts.
import Router from '@koa/router'
import { koaBody } from 'koa-body'
import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi'
import { z } from 'zod'
import { AppError, invalid } from '../shared/errors.js'
import { assertStorableText, jsonMayHoldUnstorable } from '../shared/ingest/text.js'
import { auth, type Access } from './middleware/auth.js'
import type { Role } from '../shared/members/roles.js'
import { recordAudit, type Actor } from '../shared/audit/audit.js'
import { rateLimit } from './middleware/rate-limit.js'
import type { AppContext, AppState, AuthKind, Ctx, Middleware } from './context.js'

export const BODY_LIMIT = '256kb'

/**
 * The v1 routes read JSON only: a body of another type (a form, text, XML, or none declared, as
 * `curl -d` sends) is a 415 saying so, rather than a validation error about missing fields.
 */
const requireJson: Middleware = async (ctx, next) => {
  // ctx.is() is null when the request has no body at all (an empty POST is read as {}).
  if (ctx.is('json') === false) {
    const got = ctx.get('content-type') || 'no Content-Type'
    throw new AppError(
      'unsupported_media_type',
      'unsupported_media_type',
      `request body must be JSON: send it with Content-Type: application/json (got ${got})`,
    )
  }
  await next()
}

const jsonBody = koaBody({
  json: true,
  urlencoded: false,
  text: false,
  multipart: false,
  jsonLimit: BODY_LIMIT,
  // The text as received (ctx.request.rawBody), so that a body that cannot hold unstorable text skips the walk (parseOrThrow).
  includeUnparsed: true,
  parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
})

/** The problem-details body every v1 error uses (docs/decisions.md §1). */
export const Problem = z
  .object({ type: z.string(), title: z.string(), status: z.number().int(), detail: z.string(), code: z.string() })
  .meta({ id: 'Problem' })

export interface RouteDef<B extends z.ZodType, Q extends z.ZodType> {
  method: 'get' | 'post' | 'patch' | 'delete'
  path: string
  summary: string
  tag: string
  /** Overrides the generated operationId (see operationId()) where two paths would share one. */
  operationId?: string
  /** Credentials accepted; omitted means the route is public. */
  auth?: AuthKind[]
  /**
   * The least role a session needs (docs/decisions.md §23), or 'person' for routes about the signed-in person.
   * Omitted: viewer for GET, member for other methods (what most routes need); routes needing more declare it.
   */
  role?: Role | 'person'
  /** An ingest route: API keys of scope `write` may call it. */
  ingest?: boolean
  /**
   * Whether a success writes an audit row (docs/decisions.md §23). Omitted: every authenticated route that
   * changes something (not GET, not ingest); false for a POST that changes nothing (a question, signing out).
   */
  audit?: boolean
  body?: B
  /** A body the handler reads itself (file uploads): documented for these media types, not parsed here. */
  upload?: { schema: z.ZodType; mediaTypes: string[] }
  query?: Q
  /** Successful responses by status; error responses are added from `errors`. */
  responses: Record<number, { description: string; schema?: z.ZodType }>
  errors?: number[]
  /** Counts against the account's request rate (after auth). */
  rateLimited?: boolean
}

export interface Input<B, Q> {
  body: B
  query: Q
  params: Record<string, string>
}

/** `text`, when given, is the JSON `value` was decoded from: a walk of the value runs only when the text may need it. */
function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, where: string, text?: unknown): T {
  if (typeof text !== 'string' || jsonMayHoldUnstorable(text)) assertStorableText(value, where)
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const errors = result.error.issues.map((i) => ({ path: [where, ...i.path].join('.'), message: i.message }))
  throw invalid('validation_failed', `${errors[0].path}: ${errors[0].message}`, { errors })
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input',
  401: 'Missing or invalid credentials',
  403: 'Not allowed (wrong kind of credential, CSRF, plan limit)',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  415: 'The body is not JSON (Content-Type: application/json)',
  429: 'Rate limited',
  503: 'A dependency is down',
}

/**
 * A stable operationId from method and path, so generated clients get the same method names on every build:
 * `GET /api/v1/stats/:name/alerts` is `getStatsByNameAlerts`.
 */
export function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api(\/v1)?(?=\/)/, '')
    .split('/')
    .filter(Boolean)
    .flatMap((seg) => (seg.startsWith(':') ? ['by', seg.slice(1)] : seg.split(/[^A-Za-z0-9]+/)))
    .filter(Boolean)
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')
}

/** The access a route declares, with the defaults filled in (the role matrix test reads the same). */
export function routeAccess(def: { method: string; role?: Role | 'person'; ingest?: boolean }): Access {
  return { role: def.role ?? (def.method.toLowerCase() === 'get' ? 'viewer' : 'member'), ingest: def.ingest ?? false }
}

/** Whether a route's successes are audited (RouteDef.audit). */
export function isAudited(def: { method: string; auth?: AuthKind[]; ingest?: boolean; audit?: boolean }): boolean {
  return def.audit ?? (!!def.auth && def.method.toLowerCase() !== 'get' && !def.ingest)
}

/** A route as the router serves it, with its declared access: what the role matrix and audit tests enumerate. */
export interface RouteInfo {
  method: string
  path: string
  auth: AuthKind[]
  access: Access
  audited: boolean
}

export class Routes {
  /** Every authenticated route, as declared (add and addDirect). */
  readonly declared: RouteInfo[] = []
  readonly router = new Router<AppState, AppContext>()
  private readonly operationIds = new Set<string>()
  /** Routes answered without the router's matching (the hot write routes): "METHOD /exact/path" -> handler chain. */
  private readonly direct = new Map<string, Middleware>()

  constructor(readonly registry: OpenAPIRegistry) {}

  add<B extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined>(
    def: RouteDef<B, Q>,
    handler: (ctx: Ctx, input: Input<z.infer<B>, z.infer<Q>>) => Promise<void> | void,
  ): this {
    const chain: Middleware[] = []
    const audited = isAudited(def)
    if (def.auth) chain.push(auth(routeAccess(def), ...def.auth))
    if (def.rateLimited) chain.push(rateLimit())
    if (def.body) chain.push(requireJson, jsonBody as unknown as Middleware)
    chain.push(async (ctx) => {
      const params = (ctx as unknown as { params: Record<string, string> }).params
      assertStorableText(params, 'path')
      const input = {
        body: def.body ? parseOrThrow(def.body, ctx.request.body ?? {}, 'body', (ctx.request as { rawBody?: string }).rawBody) : undefined,
        query: def.query ? parseOrThrow(def.query, ctx.query, 'query') : undefined,
        params,
      } as Input<z.infer<B>, z.infer<Q>>
      ctx.state.input = input
      await handler(ctx, input)
      if (audited && ctx.status < 300) await this.audit(ctx, def, input.body)
    })
    this.router[def.method](def.path, ...(chain as never[]))
    if (def.auth)
      this.declared.push({ method: def.method.toUpperCase(), path: def.path, auth: def.auth, access: routeAccess(def), audited })
    this.register(def)
    return this
  }

  /**
   * Serves a fixed path ahead of the router: an exact look-up instead of the router trying each route's
   * pattern, a cost every single write would pay. The route is also given to the router, so that another
   * spelling it accepts (a trailing slash, other letter case) still reaches it.
   *
   * When it is right, and only then: a write route whose body is not a v1 JSON body, so that add() cannot take it
   * (add() refuses anything but JSON with a 415 and validates with a zod schema into problem details). That is:
   * the InfluxDB line protocol (text, possibly Content-Encoding gzip: routes/influx.ts), Prometheus remote write (snappy-compressed
   * protobuf: routes/prom.ts), and the legacy routes (routes/legacy.ts), whose form and query-string bodies (and
   * the /ez JSON batch, read the way old clients send it) are read by middleware/legacy-body.ts and answered in
   * the legacy envelope. Every other route, JSON or a file upload (RouteDef.upload), uses add(). Nothing is
   * documented here: the caller registers the route's OpenAPI entry itself (routes.registry.registerPath),
   * beside the addDirect call, with schemas describing its bodies.
   */
  addDirect(method: 'GET' | 'POST', path: string, ...chain: Middleware[]): void {
    this.router[method === 'GET' ? 'get' : 'post'](path, ...(chain as never[]))
    // koa-compose, which Koa uses, is not a dependency of ours: the chain is short, fold it by hand.
    this.direct.set(
      `${method} ${path}`,
      chain.reduceRight<Middleware>(
        (next, mw) => (ctx, after) => mw(ctx, () => next(ctx, after)),
        (_ctx, after) => after(),
      ),
    )
  }

  /** The middleware that serves the direct routes; put it before the router's. */
  directRoutes(): Middleware {
    return (ctx, next) => {
      const handler = this.direct.get(`${ctx.method} ${ctx.path}`)
      return handler ? handler(ctx, next) : next()
    }
  }

  /**
   * The route's audit row: the handler may name the account, target and before/after (ctx.state.audit);
   * else the request body, redacted, is the "after". Written after the change commits, in the same request.
   */
  private async audit(ctx: Ctx, def: RouteDef<z.ZodType, z.ZodType>, body: unknown): Promise<void> {
    const told = ctx.state.audit
    const person = ctx.state.person
    const accountId = told?.accountId ?? (def.role === 'person' && person ? person.id : ctx.state.account?.id)
    if (!accountId) return
    const actor: Actor = person
      ? { type: 'person', id: person.id, email: person.email }
      : ctx.state.apiKeyId
        ? { type: 'key', id: ctx.state.apiKeyId }
        : { type: 'person', id: told?.actorId ?? accountId, ...(told?.actorEmail ? { email: told.actorEmail } : {}) }
    await recordAudit(ctx.deps.sql, {
      accountId,
      actor,
      action: def.operationId ?? operationId(def.method, def.path),
      target: told?.target ?? ctx.path,
      ip: ctx.ip || null,
      summary: told?.summary ?? (body && typeof body === 'object' && Object.keys(body).length ? { after: body } : {}),
    })
  }

  private register(def: RouteDef<z.ZodType, z.ZodType>): void {
    const id = def.operationId ?? operationId(def.method, def.path)
    // Generated clients name their methods after these: two routes sharing one is a bug to catch at start-up.
    if (this.operationIds.has(id))
      throw new Error(`operationId ${id} is used twice (${def.method} ${def.path}); give one an explicit operationId`)
    this.operationIds.add(id)
    const params = [...def.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1])
    const responses: Record<string, ResponseConfig> = {}
    for (const [status, r] of Object.entries(def.responses)) {
      responses[status] = r.schema
        ? { description: r.description, content: { 'application/json': { schema: r.schema } } }
        : { description: r.description }
    }
    const errorStatuses = new Set([
      ...(def.errors ?? []),
      ...(def.auth ? [401, 403] : []),
      ...(def.body || def.query || def.upload ? [400] : []),
      ...(def.body ? [415] : []),
    ])
    for (const status of errorStatuses)
      responses[status] = { description: ERROR_TEXT[status] ?? 'Error', content: { 'application/problem+json': { schema: Problem } } }
    this.registry.registerPath({
      method: def.method,
      path: def.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
      operationId: id,
      summary: def.summary,
      tags: [def.tag],
      // Public routes say so explicitly (an empty list), rather than leaving a reader to guess.
      security: def.auth?.map((k) => ({ [k === 'bearer' ? 'bearerAuth' : 'sessionCookie']: [] })) ?? [],
      request: {
        ...(params.length ? { params: z.object(Object.fromEntries(params.map((p) => [p, z.string()]))) } : {}),
        ...(def.query ? { query: def.query as never } : {}),
        ...(def.body ? { body: { content: { 'application/json': { schema: def.body } } } } : {}),
        ...(def.upload
          ? { body: { content: Object.fromEntries(def.upload.mediaTypes.map((t) => [t, { schema: def.upload!.schema }])) } }
          : {}),
      },
      responses,
    })
  }
}
