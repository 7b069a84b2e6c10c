// Prometheus remote write 1.0 (docs/decisions.md §21): POST /api/v1/prom/write with the key as a Bearer token, so
// a Prometheus server sends here with one remote_write block. Refusals are problem details like every v1
// route; 400s are not retried by Prometheus, 429 and 503 are.
import { z } from 'zod'
import { AppError } from '../../shared/errors.js'
import { admitProtocolRequest } from '../../shared/ingest/protocols/admit.js'
import { countSamples, decodeRemoteWrite, uncompressRemoteWrite } from '../../shared/ingest/protocols/remote-write.js'
import { writeProtocolPoints } from '../../shared/ingest/protocols/write.js'
import type { Ctx } from '../context.js'
import { protocolAccount } from '../protocol-auth.js'
import { readProtocolBody } from '../protocol-body.js'
import { Problem, type Routes } from '../route.js'

/** Compressed bytes per request: Prometheus sends at most max_samples_per_send (2,000) samples, some 50 KB. */
export const REMOTE_WRITE_BODY_LIMIT = 10 * 1024 * 1024

const nowSeconds = () => Math.floor(Date.now() / 1000)

async function write(ctx: Ctx) {
  const account = await protocolAccount(ctx, false)
  const encoding = (ctx.get('content-encoding') || 'snappy').trim().toLowerCase()
  if (encoding !== 'snappy')
    throw new AppError(
      'unsupported_media_type',
      'unsupported_content_encoding',
      `unsupported Content-Encoding ${JSON.stringify(encoding)}: remote write bodies are snappy-compressed (block format)`,
    )
  const body = await readProtocolBody(ctx, REMOTE_WRITE_BODY_LIMIT, false)
  const bytes = await uncompressRemoteWrite(body)
  // Its size in samples is refused before a point is built.
  const { samples, stale } = await countSamples(bytes)
  await admitProtocolRequest(ctx.deps.limits, account, samples - stale, samples, 'samples')
  const now = nowSeconds()
  const decoded = await decodeRemoteWrite(bytes, now)
  await writeProtocolPoints(ctx.deps.ingest, account, decoded.points, now, (i) => `series ${decoded.seriesOf[i]}`)
  ctx.status = 204
}

export function promRoutes(routes: Routes): void {
  routes.addDirect('POST', '/api/v1/prom/write', write)
  routes.registry.registerPath({
    method: 'post',
    path: '/api/v1/prom/write',
    operationId: 'postPromWrite',
    tags: ['protocols'],
    summary: 'Prometheus remote write 1.0: every sample a gauge observation of the stat named from __name__ and the labels',
    security: [{ bearerAuth: [] }],
    request: { body: { content: { 'application/x-protobuf': { schema: RemoteWriteBody } } } },
    responses: {
      204: { description: 'Every sample accepted and durably queued (stale markers are dropped)' },
      ...Object.fromEntries(
        [400, 401, 403, 413, 415, 429, 503].map((s) => [
          s,
          {
            description:
              s === 400
                ? 'A series the service cannot store (named in detail), or a body that is not a snappy-compressed WriteRequest; nothing stored, and Prometheus does not retry it'
                : s === 413
                  ? 'More than 32 MB uncompressed or more than 100,000 samples in one request; nothing was stored'
                  : 'Refused; nothing was stored',
            content: { 'application/problem+json': { schema: Problem } },
          },
        ]),
      ),
    },
  })
}

const RemoteWriteBody = z.string().meta({
  id: 'RemoteWriteBody',
  format: 'binary',
  description:
    'A prometheus.WriteRequest (remote write 1.0) in protobuf, snappy-compressed in the block format (Content-Encoding: snappy). ' +
    'Each series becomes the stat `<__name__>` with its other labels appended, sorted by name, as `.<label>_<value>`; characters outside letters, digits, space, `.`, `_` and `-` become `_`. ' +
    'Timestamps (ms) are truncated to seconds.',
})
