// Reads an uploaded file (the import route): the raw body, or the field `file`
// of a multipart/form-data body. Bytes are counted as they arrive, so a body
// over the limit is refused (413) without being held, whatever its transport.
import { invalid, tooLarge } from '../shared/errors.js'
import type { Ctx } from './context.js'
import { decodedBody } from './body-encoding.js'

/** Room for a multipart body's boundaries and part headers on top of the file itself. */
const MULTIPART_ENVELOPE = 64 * 1024

export async function readUpload(ctx: Ctx, limit: number): Promise<Buffer> {
  const type = ctx.get('content-type')
  const multipart = /^multipart\/form-data/i.test(type)
  const cap = multipart ? limit + MULTIPART_ENVELOPE : limit
  const refuse = () => {
    // The rest of the body is not read: the connection closes after the answer.
    ctx.set('Connection', 'close')
    return tooLarge(`file too large: an import file may hold at most ${limit.toLocaleString('en-US')} bytes (8 MB)`)
  }
  if (Number(ctx.get('content-length')) > cap) throw refuse()
  const chunks: Buffer[] = []
  let size = 0
  // Content-Encoding undone (or a 415), so the limit counts the file's own bytes.
  for await (const chunk of decodedBody(ctx) as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > cap) throw refuse()
    chunks.push(chunk)
  }
  const body = Buffer.concat(chunks, size)
  if (!multipart) return body
  let form: FormData
  try {
    form = await new Response(body, { headers: { 'content-type': type } }).formData()
  } catch {
    throw invalid('malformed_multipart', 'the multipart/form-data body could not be read')
  }
  const file = form.get('file')
  if (file === null) throw invalid('missing_file', 'the multipart/form-data body has no field named "file"')
  const buf = typeof file === 'string' ? Buffer.from(file, 'utf8') : Buffer.from(await file.arrayBuffer())
  if (buf.length > limit) throw refuse()
  return buf
}
