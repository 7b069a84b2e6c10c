// OTLP/HTTP metrics ingest (docs/decisions.md §25): POST /otlp/v1/metrics, protobuf or JSON (by Content-Type),
// gzip, the key as a Bearer token, so an OpenTelemetry SDK's OTLP exporter sends here with its endpoint and an
// Authorization header. Points refused alone are counted in partial_success (200); a request none of whose
// points can be stored is a 400, with nothing stored.
import { z } from 'zod'
import { AppError } from '../../shared/errors.js'
import { admitProtocolRequest } from '../../shared/ingest/protocols/admit.js'
import { convertOtlp, decodeOtlp, encodeResponse, type OtlpFormat, saveStreams } from '../../shared/ingest/protocols/otlp.js'
import { writeProtocolPoints } from '../../shared/ingest/protocols/write.js'
import type { Ctx } from '../context.js'
import { protocolAccount } from '../protocol-auth.js'
import { readProtocolBody } from '../protocol-body.js'
import type { Routes } from '../route.js'

/** Decompressed bytes per request: the 20 MiB OTLP's specification recommends. */
export const OTLP_BODY_LIMIT = 20 * 1024 * 1024

const refusalText = (refused: Array<{ metric: string; reason: string }>) =>
  refused
    .slice(0, 3)
    .map((r) => `${r.metric}: ${r.reason}`)
    .join('; ') + (refused.length > 3 ? `; and ${refused.length - 3} more` : '')

async function metrics(ctx: Ctx) {
  const type = (ctx.get('content-type') || '').split(';')[0].trim().toLowerCase()
  const format: OtlpFormat | null = type === 'application/x-protobuf' ? 'protobuf' : type === 'application/json' ? 'json' : null
  ctx.state.otlp = format ?? 'json'
  if (!format)
    throw new AppError(
      'unsupported_media_type',
      'unsupported_media_type',
      `Content-Type must be application/x-protobuf or application/json (got ${type || 'none'})`,
    )
  const account = await protocolAccount(ctx, false)
  const body = await readProtocolBody(ctx, OTLP_BODY_LIMIT, true)
  const request = decodeOtlp(body, format)
  const converted = await convertOtlp(request, account.id, ctx.deps.redis, ctx.deps.config.redisPrefix)
  const { points, refused } = converted
  await admitProtocolRequest(ctx.deps.limits, account, points.length, converted.total, 'data points')
  if (!points.length && refused.length)
    throw new AppError('invalid', 'otlp_points_refused', `every data point was refused: ${refusalText(refused)}`)
  await writeProtocolPoints(ctx.deps.ingest, account, points, Math.floor(Date.now() / 1000), (i) => `metric ${converted.metricOf[i]}`)
  await saveStreams(ctx.deps.redis, converted.state)
  ctx.status = 200
  const answer = encodeResponse(format, refused.length, refused.length ? refusalText(refused) : '')
  ctx.type = format === 'json' ? 'application/json' : 'application/x-protobuf'
  ctx.body = answer
}

export function otlpRoutes(routes: Routes): void {
  routes.addDirect('POST', '/otlp/v1/metrics', metrics)
  const Status = z
    .object({ code: z.number().int(), message: z.string() })
    .meta({ id: 'OtlpStatus', description: 'google.rpc.Status, in the encoding of the request' })
  routes.registry.registerPath({
    method: 'post',
    path: '/otlp/v1/metrics',
    operationId: 'postOtlpMetrics',
    tags: ['protocols'],
    summary: 'OTLP/HTTP metrics: an ExportMetricsServiceRequest in protobuf or JSON, optionally gzip',
    description:
      "Gauge and non-monotonic Sum: gauges. Monotonic Sum: a counter (cumulative points differenced per stream, resets detected; a stream's first cumulative point counts from its start time). Histogram and ExponentialHistogram: gauge observations with the histogram's count and sum, each inside its bucket (at most 10,000 a point). Attributes (resource and point; service.name as service) are appended to the stat name as line protocol's tags are. Summary is refused.",
    security: [{ bearerAuth: [] }],
    request: {
      body: {
        content: {
          'application/x-protobuf': { schema: z.string().meta({ format: 'binary' }) },
          'application/json': { schema: z.object({ resourceMetrics: z.array(z.unknown()) }).meta({ id: 'OtlpMetricsJson' }) },
        },
      },
    },
    responses: {
      200: {
        description: 'Stored; `partialSuccess` (rejectedDataPoints, errorMessage) names the data points refused alone',
        content: {
          'application/json': {
            schema: z
              .object({ partialSuccess: z.object({ rejectedDataPoints: z.string(), errorMessage: z.string() }).optional() })
              .meta({ id: 'OtlpMetricsResponse' }),
          },
        },
      },
      ...Object.fromEntries(
        [400, 401, 403, 413, 415, 429, 503].map((s) => [
          s,
          {
            description: s === 400 ? 'Undecodable, or every data point refused (named); nothing stored' : 'Refused; nothing stored',
            content: { 'application/json': { schema: Status } },
          },
        ]),
      ),
    },
  })
}
