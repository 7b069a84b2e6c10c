// v1 write routes (docs/decisions.md §I-4.2, §4): real status codes and problem bodies.
import { AppError, invalid } from '../../shared/errors.js'
import { validatePoint, type PointRules, type ValidPoint } from '../../shared/ingest/point.js'
import { CountBody, PointsBody, PointsOk, ValueBody, WriteOk } from '../../shared/ingest/schema.js'
import { accountOf, type AuthKind, type Ctx } from '../context.js'
import type { Routes } from '../route.js'

const nowSeconds = () => Math.floor(Date.now() / 1000)

async function writeOne(ctx: Ctx, name: string, body: Record<string, unknown>, rules: PointRules) {
  const now = nowSeconds()
  const point = validatePoint({ stat: name, count: body.count, value: body.value, t: body.t, ikey: body.ikey, tags: body.tags }, rules, now)
  const { replay } = await ctx.deps.ingest.writeOne(accountOf(ctx), point, now)
  ctx.body = { status: 'ok', ...(replay ? { replay } : {}) }
}

export function writeRoutes(routes: Routes): void {
  const common = { tag: 'writes', auth: ['bearer', 'session'] as AuthKind[], ingest: true, rateLimited: true, errors: [403, 429, 503] }
  routes
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/stats/:name/count',
        summary: 'Increment a counter stat (created on first write)',
        body: CountBody,
        responses: { 200: { description: 'Durably queued; visible to reads within a second or two', schema: WriteOk } },
      },
      (ctx, { body, params }) => writeOne(ctx, params.name, body, { kind: 'counter', countDefaultsToOne: false }),
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/stats/:name/value',
        summary: 'Record a gauge reading (created on first write)',
        body: ValueBody,
        responses: { 200: { description: 'Durably queued; visible to reads within a second or two', schema: WriteOk } },
      },
      (ctx, { body, params }) => writeOne(ctx, params.name, body, { kind: 'gauge', countDefaultsToOne: false }),
    )
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/points',
        summary: 'Record up to 1,000 points: all validated, quota checked for the whole batch, then all stored',
        body: PointsBody,
        responses: { 200: { description: 'All points durably queued (duplicates by ikey counted, not stored)', schema: PointsOk } },
      },
      async (ctx, { body }) => {
        const now = nowSeconds()
        const errors: Array<{ index: number; detail: string; code: string }> = []
        const points: ValidPoint[] = []
        body.points.forEach((p, index) => {
          try {
            points.push(validatePoint(p, { countDefaultsToOne: false }, now))
          } catch (err) {
            if (!(err instanceof AppError)) throw err
            errors.push({ index, detail: err.message, code: err.code })
          }
        })
        if (errors.length) throw invalid(errors[0].code, `points[${errors[0].index}]: ${errors[0].detail}`, { errors })
        const outcome = await ctx.deps.ingest.writeMany(accountOf(ctx), points, 'all', now, 'points')
        ctx.body = { status: 'ok', accepted: outcome.accepted, duplicates: outcome.duplicates }
      },
    )
}
