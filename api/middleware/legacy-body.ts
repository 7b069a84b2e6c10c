// Reads a legacy request the way old clients send it (docs/decisions.md §4a): a
// JSON body when the type says JSON, otherwise the body is a form whatever its
// Content-Type (or none); on POST the query string is read too, the body
// winning on a clash. Sets ctx.state.legacy so errors use the envelope.
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { invalid, tooLarge } from '../../shared/errors.js'
import { assertStorableText } from '../../shared/ingest/text.js'
import type { Ctx, Middleware } from '../context.js'
import { decodedBody } from '../body-encoding.js'

export const LEGACY_BODY_LIMIT = 256 * 1024

export type LegacyFields = Record<string, unknown>

/**
 * The raw request body as text (its Content-Encoding undone), refused with 413 past LEGACY_BODY_LIMIT. Read from the stream's events:
 * an async iterator over the request (what this was) costs a generator, a promise per chunk and an
 * end-of-stream watcher on every single write. Past the limit reading stops, and the
 * connection is closed once the 413 is out.
 */
export function readRaw(ctx: Ctx): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0)
  if (declared > LEGACY_BODY_LIMIT) return Promise.reject(tooLarge())
  let req: ReturnType<typeof decodedBody>
  try {
    req = decodedBody(ctx) // Content-Encoding undone (or a 415); the limit counts decoded bytes
  } catch (err) {
    return Promise.reject(err)
  }
  // The rest of the body is not read: the connection cannot carry another request.
  return bodyText(req, () => ctx.set('Connection', 'close'))
}

/** A body stream's text, read from its events; past LEGACY_BODY_LIMIT reading stops, `tooLarge` is told, and it rejects with 413. */
export function bodyText(req: Readable, onTooLarge: () => void): Promise<string> {
  return new Promise((resolve, reject) => readBody(req, onTooLarge, (err, text) => (err ? reject(err) : resolve(text!))))
}

/**
 * bodyText() told through a callback: the direct write route (api/direct-writes.ts) reads every single write's
 * body this way, without the promise and its continuation.
 */
export function readBody(req: Readable, onTooLarge: () => void, done: (err: Error | undefined, text?: string) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  const stop = () => {
    req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size <= LEGACY_BODY_LIMIT) return void chunks.push(chunk)
    stop()
    req.pause()
    onTooLarge()
    done(tooLarge())
  }
  const onEnd = () => {
    stop()
    done(undefined, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'))
  }
  const onError = (err: Error) => {
    stop()
    done(err)
  }
  // The client went away before the body ended: nothing to answer, but the caller must be told.
  const onClose = () =>
    onError(Object.assign(new Error('request body ended early: the client closed the connection'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }))
  req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose)
}

/**
 * A legacy request the direct write route (api/direct-writes.ts) read and handed on: its body's text (already
 * read from the request), and the refusal to answer when it had decided the write and could not queue it.
 */
export interface HandedOn {
  text: Promise<string>
  failed?: unknown
}
export const HANDED_ON = Symbol('legacy request handed on')
type HandedRequest = IncomingMessage & { [HANDED_ON]?: HandedOn }

/** Marks a request as handed on by the direct route, for legacyBody() below. */
export function handOn(req: IncomingMessage, handed: HandedOn): void {
  ;(req as HandedRequest)[HANDED_ON] = handed
}

/**
 * What ctx.is('json') answers for a request that has a body: its media type is application/json
 * (parameters and letter case aside). Without type-is' general parsing, which every form write paid.
 * A request without a body reads as {} either way.
 */
export function declaresJson(contentType: string | undefined): boolean {
  if (!contentType) return false
  const semi = contentType.indexOf(';')
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === 'application/json'
}

/**
 * Form fields: `+` is a space, malformed escapes are kept as typed, a repeated key keeps its first value.
 * `data` is read only from a JSON body (the /ez batch): in a form or query string it is a stray key.
 */
export function parseForm(text: string): LegacyFields {
  const out: LegacyFields = {}
  if (text.includes('%') || text.includes('+')) {
    for (const [k, v] of new URLSearchParams(text)) if (k && k !== 'data' && !(k in out)) out[k] = v
    return out
  }
  // Nothing to decode (no escape, no `+`), as most forms: the pairs exactly as URLSearchParams reads them (split
  // on `&`, empty pairs skipped, a name up to the first `=`), without its decoding pass and a pair array each.
  for (let at = 0; at < text.length; ) {
    let end = text.indexOf('&', at)
    if (end === -1) end = text.length
    if (end > at) {
      const eq = text.indexOf('=', at)
      const named = eq !== -1 && eq < end
      const k = text.slice(at, named ? eq : end)
      if (k && k !== 'data' && !(k in out)) out[k] = named ? text.slice(eq + 1, end) : ''
    }
    at = end + 1
  }
  return out
}

export function legacyBody(): Middleware {
  return async (ctx, next) => {
    ctx.state.legacy = { strict: ctx.get('x-service-strict') === '1' }
    ctx.set('Access-Control-Allow-Origin', '*')
    const handed = (ctx.req as HandedRequest)[HANDED_ON]
    if (handed?.failed) throw handed.failed
    // A POST from a client usually has no query string: nothing to parse or merge.
    const query = ctx.querystring ? parseForm(ctx.querystring) : undefined
    let fields: LegacyFields = query ?? {}
    if (ctx.method === 'POST') {
      const raw = await (handed ? handed.text : readRaw(ctx))
      if (declaresJson(ctx.req.headers['content-type'])) {
        let parsed: unknown
        try {
          parsed = raw.trim() ? JSON.parse(raw) : {}
        } catch {
          throw invalid('malformed_body', 'invalid JSON body')
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          throw invalid('malformed_body', 'JSON body must be an object')
        fields = query ? { ...query, ...(parsed as LegacyFields) } : (parsed as LegacyFields)
      } else {
        fields = query ? { ...query, ...parseForm(raw) } : parseForm(raw)
      }
    }
    assertStorableText(fields, '')
    ctx.state.input = { body: fields }
    await next()
  }
}
