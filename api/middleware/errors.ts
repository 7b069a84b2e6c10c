// The one place where errors become HTTP responses: RFC 9457 problem details.
// Unknown errors are logged with the request id and answered as a masked 500.
import { AppError, invalid, tooLarge } from '../../shared/errors.js'
import { unavailableFor } from '../../shared/outages.js'
import type { Ctx } from '../context.js'
import { unsupportedContentEncoding } from '../body-encoding.js'
import { encodeStatus } from '../../shared/ingest/protocols/otlp.js'

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8'

/** Turns errors thrown by body parsers and the like into our typed errors. */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; code?: unknown }
  const status = e?.status ?? e?.statusCode
  // zlib (Z_*) and brotli (ERR__ERROR_*) refusing a body that is not what its Content-Encoding says: the client's error.
  if (status === undefined && typeof e?.code === 'string' && /^(Z_|ERR__ERROR_)/.test(e.code)) {
    return invalid(
      'malformed_body',
      `request body could not be decompressed as its Content-Encoding says (${(err as Error).message}); send it compressed that way, or without the header`,
    )
  }
  if (status === 413) return tooLarge()
  // The body parser's 415 is an encoding it cannot undo (Content-Encoding: compress).
  if (status === 415) return unsupportedContentEncoding()
  // Body parsers: co-body marks its errors `expose`; JSON.parse's SyntaxError arrives with a status only.
  if (status === 400 && (e.expose || err instanceof SyntaxError)) return invalid('malformed_body', 'request body could not be parsed')
  return null
}

/** Writes a problem-details body for an AppError. */
export function sendProblem(ctx: Ctx, err: AppError): void {
  ctx.status = err.status
  if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter))
  ctx.body = { type: `/docs/problems#${err.code}`, title: err.title, status: err.status, detail: err.message, code: err.code, ...err.extra }
  ctx.type = PROBLEM_TYPE
}

/**
 * The legacy envelope of docs/decisions.md §I-4.1.4: the body's `status` is the verdict.
 * Malformed input is 400, oversize 413, an unknown Content-Encoding 415 and rate limits 429 in every mode; the
 * other rejections are 200 unless strict mode asked for their real status.
 */
export function sendLegacyError(ctx: Ctx, err: AppError | null, strict: boolean): void {
  // A body that cannot be read (malformed, too large, an encoding we cannot undo) is refused outright.
  const always =
    err && (err.kind === 'invalid' || err.kind === 'too_large' || err.kind === 'unsupported_media_type' || err.kind === 'rate_limited')
  const real = err ? (err.kind === 'quota' ? 429 : err.status) : 500
  ctx.status = always || strict ? real : 200
  if (err?.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter))
  // The envelope is {status, msg}; a batch stopped part-way also says how far it got.
  const accepted = err?.extra.accepted
  ctx.body = {
    status: 'error',
    msg: err ? err.message : `internal error (request id ${ctx.state.requestId})`,
    ...(accepted !== undefined ? { accepted } : {}),
  }
}

// InfluxDB 2.x error codes by kind (its API's `code` enum), so its clients read our refusals as theirs.
const INFLUX_CODE: Record<string, string> = {
  invalid: 'invalid',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  quota: 'forbidden',
  not_found: 'not found',
  method_not_allowed: 'method not allowed',
  conflict: 'conflict',
  too_large: 'request too large',
  unsupported_media_type: 'unsupported media type',
  rate_limited: 'too many requests',
  unavailable: 'unavailable',
}

/**
 * InfluxDB's answer to a refused write: `{"code", "message"}` on /api/v2/write, `{"error"}` (and the
 * X-Influxdb-Error header) on the 1.x /write, with the same status our v1 routes give. Telegraf and the
 * client libraries show `message`/`error` to the person, so the line named there reaches them.
 */
export function sendInfluxError(ctx: Ctx, err: AppError | null, version: 'v1' | 'v2'): void {
  ctx.status = err ? err.status : 500
  if (err?.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter))
  const message = err ? err.message : `internal error (request id ${ctx.state.requestId})`
  if (version === 'v1') ctx.set('X-Influxdb-Error', message.replace(/[^\x20-\x7e]/g, '?'))
  ctx.body = version === 'v1' ? { error: message } : { code: err ? (INFLUX_CODE[err.kind] ?? 'invalid') : 'internal error', message }
}

// Prometheus' errorType by kind (web/api/v1/api.go); its clients (Grafana, promtool) show `error` to the person.
const PROMETHEUS_TYPE: Record<string, string> = {
  invalid: 'bad_data',
  too_large: 'bad_data',
  unsupported_media_type: 'bad_data',
  not_found: 'not_found',
  rate_limited: 'unavailable',
  unavailable: 'unavailable',
}

/**
 * Prometheus' error envelope, `{"status":"error","errorType":"bad_data","error":"..."}`, with its statuses: 400
 * for bad parameters and queries, 422 for a query that cannot be executed (docs/decisions.md §25).
 */
export function sendPrometheusError(ctx: Ctx, err: AppError | null): void {
  const execution = err?.code === 'promql_execution'
  ctx.status = err ? (execution ? 422 : err.status) : 500
  if (err?.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter))
  const errorType = !err ? 'internal' : execution ? 'execution' : (PROMETHEUS_TYPE[err.kind] ?? err.kind)
  ctx.body = { status: 'error', errorType, error: err ? err.message : `internal error (request id ${ctx.state.requestId})` }
}

/** OTLP's refusal: google.rpc.Status in the request's encoding; 429 and 503 carry Retry-After (the exporter retries those only). */
export function sendOtlpError(ctx: Ctx, err: AppError | null, format: 'protobuf' | 'json'): void {
  ctx.status = err ? err.status : 500
  if (err?.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter))
  ctx.body = encodeStatus(format, ctx.status, err ? err.message : `internal error (request id ${ctx.state.requestId})`)
  ctx.type = format === 'json' ? 'application/json' : 'application/x-protobuf'
}

/** A request no route answered: the problem body of its 404 or 405. */
export function answerUnrouted(ctx: Ctx): void {
  // A method the router implements nowhere (TRACE, PROPFIND, ...) comes back as 501 with the path's methods
  // in Allow: to the client it is a method this resource does not allow (405), or, on a path with no route
  // at all, a resource that does not exist (404).
  if (ctx.status === 501 && ctx.body == null) {
    if (ctx.response.get('Allow')) ctx.status = 405
    else {
      ctx.remove('Allow')
      ctx.status = 404
    }
  }
  if (ctx.body != null || (ctx.status !== 404 && ctx.status !== 405)) return
  sendProblem(
    ctx,
    ctx.status === 404
      ? new AppError('not_found', 'route_not_found', `no route for ${ctx.method} ${ctx.path}`)
      : new AppError('method_not_allowed', 'method_not_allowed', `method ${ctx.method} not allowed on ${ctx.path}`),
  )
}

/** Answers whatever a route threw. */
export function answerError(ctx: Ctx, thrown: unknown): void {
  // A dependency being down is a 503 (the envelope's error on legacy routes), logged once per outage by `outages`.
  const down = ctx.deps.outages.report(thrown)
  const err = toAppError(thrown) ?? (down ? unavailableFor(down) : null)
  if (!err)
    ctx.deps.log.error('unhandled error', { request_id: ctx.state.requestId, method: ctx.method, url: ctx.originalUrl, error: thrown })
  if (ctx.state.legacy) return sendLegacyError(ctx, err, ctx.state.legacy.strict)
  if (ctx.state.influx) return sendInfluxError(ctx, err, ctx.state.influx)
  if (ctx.state.prometheus) return sendPrometheusError(ctx, err)
  if (ctx.state.otlp) return sendOtlpError(ctx, err, ctx.state.otlp)
  if (err) return sendProblem(ctx, err)
  ctx.status = 500
  ctx.body = {
    type: '/docs/problems#internal',
    title: 'Internal Server Error',
    status: 500,
    detail: `internal error (request id ${ctx.state.requestId})`,
    code: 'internal',
  }
  ctx.type = PROBLEM_TYPE
}
