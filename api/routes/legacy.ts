// The predecessor's endpoints /ez, /c and /v (docs/decisions.md §I-4.1), wire-compatible
// so that unmodified clients keep working. Also at /api/ez, /api/c, /api/v.
import { z } from 'zod'
import { invalid, unauthorized } from '../../shared/errors.js'
import { forbiddenScope, keyRole, scopeAllows } from '../middleware/auth.js'
import { legacyKeyField, type ResolvedKey } from '../../shared/auth/key-resolver.js'
import { validatePoint, type PointRules } from '../../shared/ingest/point.js'
import type { Account } from '../../shared/accounts/repo.js'
import { enforceRate } from '../middleware/rate-limit.js'
import { legacyBody, type LegacyFields } from '../middleware/legacy-body.js'
import type { Ctx } from '../context.js'
import type { Routes } from '../route.js'

export const MAX_EZ_BATCH = 100
const MISSING = 'missing required parameter'

const nowSeconds = () => Math.floor(Date.now() / 1000)

/**
 * The account behind the key field; a missing or unknown key is the same refusal. Decided without a promise when
 * this process holds the key and a lease of the account's rate (a busy writer), else a promise.
 */
function legacyAccount(ctx: Ctx, fields: LegacyFields, keyField: 'ezkey' | 'ukey'): Account | Promise<Account> {
  const presented = legacyKeyField(fields, keyField)
  if (!presented) throw unauthorized(MISSING, 'missing_parameter')
  const known = ctx.deps.keys.cached(presented)
  if (known === undefined) return ctx.deps.keys.resolve(presented).then((resolved) => admitKey(ctx, resolved, keyField))
  return admitKey(ctx, known, keyField)
}

function admitKey(ctx: Ctx, resolved: ResolvedKey | null, keyField: 'ezkey' | 'ukey'): Account | Promise<Account> {
  if (!resolved) throw unauthorized(`invalid ${keyField}`, 'invalid_key')
  // Every legacy route writes: a read key is refused (in the legacy envelope, like every error here).
  if (!scopeAllows(resolved.scope, 'POST', true)) throw forbiddenScope(resolved.scope)
  keyRole(resolved.role, 'member') // writing takes the member role, as on the v1 write routes
  const wait = enforceRate(ctx, resolved.account)
  return wait ? wait.then(() => resolved.account) : resolved.account
}

async function writeSingle(ctx: Ctx, account: Account, fields: LegacyFields, statField: 'stat' | 'key', rules: PointRules) {
  if (fields[statField] === undefined) throw invalid('missing_parameter', MISSING)
  const now = nowSeconds()
  const point = validatePoint(
    { stat: fields[statField], count: fields.count, value: fields.value, t: fields.t, ikey: fields.ikey },
    rules,
    now,
  )
  const { replay } = await ctx.deps.ingest.writeOne(account, point, now)
  ctx.body = { status: 200, msg: 'ok', ...(replay ? { replay } : {}) }
}

/** The /ez JSON batch: malformed anywhere refuses all; otherwise items commit in order until a quota stops them. */
async function writeBatch(ctx: Ctx, account: Account, data: unknown) {
  if (!Array.isArray(data)) throw invalid('invalid_data', 'invalid data: must be an array of points')
  if (data.length > MAX_EZ_BATCH) throw invalid('batch_too_large', `invalid data: at most ${MAX_EZ_BATCH} points per request`)
  const now = nowSeconds()
  const points = data.map((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw invalid('invalid_data', `data[${i}]: must be an object`)
    const it = item as LegacyFields
    if (it.stat === undefined) throw invalid('missing_parameter', `data[${i}]: ${MISSING}`)
    return validatePoint(
      { stat: it.stat, count: it.count, value: it.value, t: it.t, ikey: it.ikey },
      { countDefaultsToOne: true },
      now,
      `data[${i}]: `,
    )
  })
  const outcome = await ctx.deps.ingest.writeMany(account, points, 'prefix', now, 'data')
  if (outcome.stoppedBy) {
    outcome.stoppedBy.extra.accepted = outcome.accepted
    throw outcome.stoppedBy
  }
  // As v1 does: accepted counts every item taken, duplicates those of them a retry had already stored.
  ctx.body = { status: 200, msg: 'ok', accepted: outcome.accepted, duplicates: outcome.duplicates }
}

export function legacyRoutes(routes: Routes): void {
  const { router } = routes
  const ez = async (ctx: Ctx) => {
    const fields = ctx.state.input.body as LegacyFields
    const found = legacyAccount(ctx, fields, 'ezkey')
    const account = found instanceof Promise ? await found : found
    if (fields.data !== undefined) return writeBatch(ctx, account, fields.data)
    await writeSingle(ctx, account, fields, 'stat', { countDefaultsToOne: true })
  }
  const c = async (ctx: Ctx) => {
    const fields = ctx.state.input.body as LegacyFields
    const found = legacyAccount(ctx, fields, 'ukey')
    await writeSingle(ctx, found instanceof Promise ? await found : found, fields, 'key', { kind: 'counter', countDefaultsToOne: true })
  }
  const v = async (ctx: Ctx) => {
    const fields = ctx.state.input.body as LegacyFields
    const found = legacyAccount(ctx, fields, 'ukey')
    await writeSingle(ctx, found instanceof Promise ? await found : found, fields, 'key', { kind: 'gauge', countDefaultsToOne: true })
  }
  const preflight = (ctx: Ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*')
    ctx.set('Access-Control-Allow-Methods', ctx.path.endsWith('ez') ? 'GET, POST, OPTIONS' : 'POST, OPTIONS')
    ctx.set('Access-Control-Allow-Headers', 'Content-Type, X-Service-Strict')
    ctx.set('Access-Control-Max-Age', '86400')
    ctx.status = 204
  }
  for (const base of ['', '/api']) {
    routes.addDirect('GET', `${base}/ez`, legacyBody(), ez)
    routes.addDirect('POST', `${base}/ez`, legacyBody(), ez)
    routes.addDirect('POST', `${base}/c`, legacyBody(), c)
    routes.addDirect('POST', `${base}/v`, legacyBody(), v)
    for (const p of ['ez', 'c', 'v']) router.options(`${base}/${p}`, preflight)
  }
  registerLegacyDocs(routes)
}

// The legacy routes read forms the way old clients send them (legacy-body.ts), not through zod; their
// fields are described here from schemas so that the reference shows them as parameters and bodies.
const text = (description: string) => z.string().optional().meta({ description })
const number = (description: string) => z.union([z.number(), z.string()]).optional().meta({ description })
const pointFields = {
  count: number('Counter increment (defaults to 1). Send count or value, not both.'),
  value: number('Gauge value. Send count or value, not both.'),
  t: number('Unix seconds of the point (defaults to now; up to 32 days back, 5 minutes ahead)'),
  ikey: text('Idempotency key: a retry with the same t and ikey is stored once'),
}
const EzForm = z
  .object({
    ezkey: text("The account's e-mail address or an API key (either field name works)"),
    email: text('Alias of ezkey'),
    stat: text('Stat name (created on first write)'),
    ...pointFields,
  })
  .meta({ id: 'LegacyEzForm' })
const EzBatch = z
  .object({
    ezkey: z.string().meta({ description: "The account's e-mail address or an API key" }),
    data: z.array(z.object({ stat: z.string(), ...pointFields })).max(MAX_EZ_BATCH),
  })
  .meta({ id: 'LegacyEzBatch' })
const ClassicForm = (valueField: 'count' | 'value') =>
  z.object({
    ukey: text("The account's e-mail address or an API key"),
    email: text('Alias of ukey'),
    key: text('Stat name (created on first write)'),
    [valueField]: pointFields[valueField],
    t: pointFields.t,
  })
const Envelope = z
  .object({
    status: z.union([z.literal(200), z.literal('error')]),
    msg: z.string(),
    accepted: z.number().int().optional(),
    duplicates: z.number().int().optional(),
  })
  .meta({ id: 'LegacyEnvelope' })

function registerLegacyDocs(routes: Routes): void {
  const envelope = {
    description:
      'Legacy envelope: {"status": 200, "msg": "ok"} on success (plus "replay" where it applies); {"status": "error", "msg": "..."} on rejection, HTTP 200 unless the input is malformed (400: a body not compressed the way its Content-Encoding says among them), too large (413), in a Content-Encoding other than gzip, deflate or br (415), rate limited (429) or X-Service-Strict: 1 asked for the real status.',
    content: { 'application/json': { schema: Envelope } },
  }
  const responses = { 200: envelope, 400: envelope, 413: envelope, 415: envelope, 429: envelope }
  const form = (schema: z.ZodType) => ({ content: { 'application/x-www-form-urlencoded': { schema } } })
  const common = { tags: ['legacy'], security: [] }
  routes.registry.registerPath({
    ...common,
    method: 'get',
    path: '/ez',
    operationId: 'getEz',
    summary: 'Record one point (legacy; the key sits in the query string, so treat it as exposed)',
    request: { query: EzForm },
    responses,
  })
  routes.registry.registerPath({
    ...common,
    method: 'post',
    path: '/ez',
    operationId: 'postEz',
    summary: 'Record one point (form), or up to 100 with a JSON body {ezkey, data: [...]}',
    request: { body: { content: { ...form(EzForm).content, 'application/json': { schema: EzBatch } } } },
    responses,
  })
  routes.registry.registerPath({
    ...common,
    method: 'post',
    path: '/c',
    operationId: 'postC',
    summary: 'Record a counter increment (count defaults to 1)',
    request: { body: form(ClassicForm('count').meta({ id: 'LegacyCounterForm' })) },
    responses,
  })
  routes.registry.registerPath({
    ...common,
    method: 'post',
    path: '/v',
    operationId: 'postV',
    summary: 'Record a gauge value',
    request: { body: form(ClassicForm('value').meta({ id: 'LegacyGaugeForm' })) },
    responses,
  })
}
