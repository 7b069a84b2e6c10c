// Reads a legacy request the way old clients send it (decisions.md 4a): a
// JSON body when the type says JSON, otherwise the body is a form whatever its
// Content-Type (or none); on POST the query string is read too, the body
// winning on a clash. Sets ctx.state.legacy so errors use the envelope.
import { invalid, tooLarge } from '../../shared/errors.js'
import { assertStorableText } from '../../shared/ingest/text.js'
import type { Ctx, Middleware } from '../context.js'

export const LEGACY_BODY_LIMIT = 256 * 1024

export type LegacyFields = Record<string, unknown>

/** The raw request body as text, refused with 413 past LEGACY_BODY_LIMIT. */
export async function readRaw(ctx: Ctx): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0)
  if (declared > LEGACY_BODY_LIMIT) throw tooLarge()
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > LEGACY_BODY_LIMIT) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Form fields: `+` is a space, malformed escapes are kept as typed, a repeated key keeps its first value.
 * `data` is read only from a JSON body (the /ez batch): in a form or query string it is a stray key.
 */
function parseForm(text: string): LegacyFields {
  const out: LegacyFields = {}
  for (const [k, v] of new URLSearchParams(text)) if (k && k !== 'data' && !(k in out)) out[k] = v
  return out
}

export function legacyBody(): Middleware {
  return async (ctx, next) => {
    ctx.state.legacy = { strict: ctx.get('x-service-strict') === '1' }
    ctx.set('Access-Control-Allow-Origin', '*')
    const query = parseForm(ctx.querystring)
    let fields: LegacyFields = query
    if (ctx.method === 'POST') {
      const raw = await readRaw(ctx)
      if (ctx.is('json')) {
        let parsed: unknown
        try {
          parsed = raw.trim() ? JSON.parse(raw) : {}
        } catch {
          throw invalid('malformed_body', 'invalid JSON body')
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('malformed_body', 'JSON body must be an object')
        fields = { ...query, ...(parsed as LegacyFields) }
      } else {
        fields = { ...query, ...parseForm(raw) }
      }
    }
    assertStorableText(fields, '')
    ctx.state.input = { body: fields }
    await next()
  }
}
