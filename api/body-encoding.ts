// The request body as its sender meant it: Content-Encoding undone, the way the v1 routes' body parser
// (koa-body, through raw-body's inflation) does it, for the routes that read their body themselves (the
// legacy /ez, /c and /v, the import upload, the payment webhook). gzip, deflate and br are decoded; any
// other encoding is a 415; a body that is not compressed the way its header says fails in zlib, and the
// error middleware answers that as a 400 (toAppError). Limits count decoded bytes, so a small compressed
// body cannot expand past them.
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream'
import zlib from 'node:zlib'
import { AppError } from '../shared/errors.js'
import type { Ctx } from './context.js'

export function unsupportedContentEncoding(): AppError {
  return new AppError(
    'unsupported_media_type',
    'unsupported_content_encoding',
    'unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br',
  )
}

const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
}

/** The stream to read the body from: the request itself when it is not encoded (the common case, no copy). */
export function decodedBody(ctx: Ctx): Readable {
  const header = ctx.req.headers['content-encoding']
  if (header === undefined) return ctx.req
  const encoding = header.trim().toLowerCase()
  if (encoding === '' || encoding === 'identity') return ctx.req
  const decoder = Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding]() : undefined
  if (!decoder) throw unsupportedContentEncoding()
  // A request that fails or ends early destroys the decoder with that error: readers see it there.
  pipeline(ctx.req, decoder, () => {})
  return decoder
}
