// InfluxDB line protocol writes (docs/decisions.md §21): POST /api/v2/write and the 1.x POST /write, so that
// Telegraf and the InfluxDB client libraries send here with only their URL and token changed.
import { z } from 'zod'
import { admitProtocolRequest, MAX_POINTS_PER_REQUEST } from '../../shared/ingest/protocols/admit.js'
import { countPointLines, parseLineProtocol, parsePrecision } from '../../shared/ingest/protocols/line-protocol.js'
import { writeProtocolPoints } from '../../shared/ingest/protocols/write.js'
import { invalid } from '../../shared/errors.js'
import type { Ctx } from '../context.js'
import { protocolAccount } from '../protocol-auth.js'
import { readProtocolBody } from '../protocol-body.js'
import type { Routes } from '../route.js'

/** Decoded bytes per request: some 100,000 lines of Telegraf's usual length. */
export const LINE_PROTOCOL_BODY_LIMIT = 10 * 1024 * 1024

const nowSeconds = () => Math.floor(Date.now() / 1000)

async function write(ctx: Ctx, version: 'v1' | 'v2') {
  ctx.state.influx = version
  const account = await protocolAccount(ctx, version === 'v1')
  const precision = parsePrecision(ctx.query.precision)
  const body = await readProtocolBody(ctx, LINE_PROTOCOL_BODY_LIMIT, true)
  // Its size in points (at least one a line) is refused before a point is built.
  const lines = await countPointLines(body)
  await admitProtocolRequest(ctx.deps.limits, account, lines, lines, 'lines')
  const text = body.toString('utf8')
  if (text.includes('\uFFFD')) throw invalid('malformed_body', 'request body is not UTF-8 text')
  const now = nowSeconds()
  const parsed = await parseLineProtocol(text, precision, now, MAX_POINTS_PER_REQUEST)
  await writeProtocolPoints(ctx.deps.ingest, account, parsed.points, now, (i) => `line ${parsed.lineOf[i]}`)
  ctx.status = 204
}

export function influxRoutes(routes: Routes): void {
  routes.addDirect('POST', '/api/v2/write', (ctx) => write(ctx, 'v2'))
  routes.addDirect('POST', '/write', (ctx) => write(ctx, 'v1'))
  registerDocs(routes)
}

const Precision = z
  .enum(['ns', 'us', 'ms', 's'])
  .optional()
  .meta({ description: 'Unit of the timestamps (default ns); they are truncated to whole seconds. 1.x also takes n, u, m and h.' })
const V2Query = z
  .object({
    org: z.string().optional().meta({ description: 'Accepted and ignored: the key names the account' }),
    bucket: z.string().optional().meta({ description: 'Accepted and ignored' }),
    precision: Precision,
  })
  .meta({ id: 'LineProtocolV2Query' })
const V1Query = z
  .object({
    db: z.string().optional().meta({ description: 'Accepted and ignored' }),
    u: z.string().optional().meta({ description: 'User name: accepted and ignored' }),
    p: z.string().optional().meta({ description: 'The API key (or send it in Authorization)' }),
    precision: Precision,
  })
  .meta({ id: 'LineProtocolV1Query' })
const LineProtocolBody = z.string().meta({
  id: 'LineProtocolBody',
  description:
    'InfluxDB line protocol, one point per line: `measurement[,tag=value...] field=value[,field=value...] [timestamp]`. ' +
    'Each field is recorded as the gauge `<measurement>.<field>` (the field `value` as `<measurement>`) with the tags appended, sorted by key, as `.<key>_<value>`. ' +
    'Field values must be numbers (floats, `12i`, `12u`); a line with a string or boolean field, or any other fault, refuses the whole request, naming the line. May be gzip-compressed (Content-Encoding: gzip).',
  example: 'cpu,host=web1 usage=12.5,idle=80i 1700000000000000000',
})
const InfluxV2Error = z.object({ code: z.string(), message: z.string() }).meta({ id: 'InfluxV2Error' })
const InfluxV1Error = z.object({ error: z.string() }).meta({ id: 'InfluxV1Error' })

function registerDocs(routes: Routes): void {
  const failures = (schema: z.ZodType) =>
    Object.fromEntries(
      [400, 401, 403, 413, 415, 429, 503].map((s) => [
        s,
        {
          description:
            s === 400
              ? 'A bad line: the message names it (`line 3: ...`); nothing of the request was stored'
              : s === 413
                ? 'More than 10 MB (decoded) or more than 100,000 points in one request; nothing was stored'
                : 'Refused; nothing was stored',
          content: { 'application/json': { schema } },
        },
      ]),
    )
  const body = { content: { 'text/plain': { schema: LineProtocolBody } } }
  routes.registry.registerPath({
    method: 'post',
    path: '/api/v2/write',
    operationId: 'postV2Write',
    tags: ['protocols'],
    summary: 'Write InfluxDB line protocol (InfluxDB 2.x API; Authorization: Token <API key>, or Bearer)',
    security: [{ bearerAuth: [] }],
    request: { query: V2Query, body },
    responses: { 204: { description: 'Every line accepted and durably queued' }, ...failures(InfluxV2Error) },
  })
  routes.registry.registerPath({
    method: 'post',
    path: '/write',
    operationId: 'postWrite',
    tags: ['protocols'],
    summary: 'Write InfluxDB line protocol (InfluxDB 1.x API; the key as p, as the Basic password, or in Authorization)',
    security: [{ bearerAuth: [] }],
    request: { query: V1Query, body },
    responses: { 204: { description: 'Every line accepted and durably queued' }, ...failures(InfluxV1Error) },
  })
}
