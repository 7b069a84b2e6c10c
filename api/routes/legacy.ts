// The predecessor's endpoints /ez, /c and /v (interface 4.1), wire-compatible
// so that unmodified clients keep working. Also at /api/ez, /api/c, /api/v.
import { invalid, unauthorized } from '../../shared/errors.js'
import { legacyKeyField } from '../../shared/auth/key-resolver.js'
import { validatePoint, type PointRules } from '../../shared/ingest/point.js'
import type { Account } from '../../shared/accounts/repo.js'
import { enforceRate } from '../middleware/rate-limit.js'
import { legacyBody, type LegacyFields } from '../middleware/legacy-body.js'
import type { Ctx } from '../context.js'
import type { Routes } from '../route.js'

export const MAX_EZ_BATCH = 100
const MISSING = 'missing required parameter'

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** The account behind the key field; a missing or unknown key is the same refusal. */
async function legacyAccount(ctx: Ctx, fields: LegacyFields, keyField: 'ezkey' | 'ukey'): Promise<Account> {
  const presented = legacyKeyField(fields, keyField)
  if (!presented) throw unauthorized(MISSING, 'missing_parameter')
  const resolved = await ctx.deps.keys.resolve(presented)
  if (!resolved) throw unauthorized(`invalid ${keyField}`, 'invalid_key')
  await enforceRate(ctx, resolved.account)
  return resolved.account
}

async function writeSingle(ctx: Ctx, account: Account, fields: LegacyFields, statField: 'stat' | 'key', rules: PointRules) {
  if (fields[statField] === undefined) throw invalid('missing_parameter', MISSING)
  const now = nowSeconds()
  const point = validatePoint({ stat: fields[statField], count: fields.count, value: fields.value, t: fields.t, ikey: fields.ikey }, rules, now)
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
    return validatePoint({ stat: it.stat, count: it.count, value: it.value, t: it.t, ikey: it.ikey }, { countDefaultsToOne: true }, now, `data[${i}]: `)
  })
  const outcome = await ctx.deps.ingest.writeMany(account, points, 'prefix', now, 'data')
  if (outcome.stoppedBy) {
    outcome.stoppedBy.extra.accepted = outcome.accepted
    throw outcome.stoppedBy
  }
  ctx.body = { status: 200, msg: 'ok', accepted: outcome.accepted }
}

export function legacyRoutes(routes: Routes): void {
  const { router } = routes
  const ez = async (ctx: Ctx) => {
    const fields = ctx.state.input.body as LegacyFields
    const account = await legacyAccount(ctx, fields, 'ezkey')
    if (fields.data !== undefined) return writeBatch(ctx, account, fields.data)
    await writeSingle(ctx, account, fields, 'stat', { countDefaultsToOne: true })
  }
  const c = async (ctx: Ctx) => {
    const fields = ctx.state.input.body as LegacyFields
    await writeSingle(ctx, await legacyAccount(ctx, fields, 'ukey'), fields, 'key', { kind: 'counter', countDefaultsToOne: true })
  }
  const v = async (ctx: Ctx) => {
    const fields = ctx.state.input.body as LegacyFields
    await writeSingle(ctx, await legacyAccount(ctx, fields, 'ukey'), fields, 'key', { kind: 'gauge', countDefaultsToOne: true })
  }
  const preflight = (ctx: Ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*')
    ctx.set('Access-Control-Allow-Methods', ctx.path.endsWith('ez') ? 'GET, POST, OPTIONS' : 'POST, OPTIONS')
    ctx.set('Access-Control-Allow-Headers', 'Content-Type, X-Service-Strict')
    ctx.set('Access-Control-Max-Age', '86400')
    ctx.status = 204
  }
  for (const base of ['', '/api']) {
    router.get(`${base}/ez`, legacyBody(), ez)
    router.post(`${base}/ez`, legacyBody(), ez)
    router.post(`${base}/c`, legacyBody(), c)
    router.post(`${base}/v`, legacyBody(), v)
    for (const p of ['ez', 'c', 'v']) router.options(`${base}/${p}`, preflight)
  }
  registerLegacyDocs(routes)
}

/** The legacy routes are not JSON-schema routes; they are described for the reference by hand. */
function registerLegacyDocs(routes: Routes): void {
  const envelope = { description: 'Legacy envelope: {"status": 200, "msg": "ok"} on success (plus "replay" where it applies); {"status": "error", "msg": "..."} on rejection, HTTP 200 unless the input is malformed (400), too large (413), rate limited (429) or X-Service-Strict: 1 asked for the real status.' }
  const form = (fields: string) => ({ description: `application/x-www-form-urlencoded (or a query string) with ${fields}` })
  for (const [method, path, summary, fields] of [
    ['get', '/ez', 'Record one point (legacy, key in the query string: treat it as exposed)', 'ezkey (or email), stat, count or value, t, ikey'],
    ['post', '/ez', 'Record one point, or up to 100 with a JSON body {ezkey, data: [...]}', 'ezkey (or email), stat, count or value, t, ikey'],
    ['post', '/c', 'Record a counter increment (count defaults to 1)', 'ukey (or email), key (the stat name), count, t'],
    ['post', '/v', 'Record a gauge value', 'ukey (or email), key (the stat name), value, t'],
  ] as const) {
    routes.registry.registerPath({ method, path, summary, tags: ['legacy'], description: form(fields).description, responses: { 200: envelope, 400: envelope, 413: envelope, 429: envelope } })
  }
}
