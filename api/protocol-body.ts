// The whole body of a protocol write (line protocol, remote write) as bytes, counted as it arrives, so a
// body over `limit` is refused (413) without being held. Line protocol bodies arrive gzipped from Telegraf
// and the InfluxDB clients: `decode` undoes Content-Encoding as the other routes do. Remote write's
// `Content-Encoding: snappy` is the payload's own format, read by its decoder, so it passes `decode: false`.
import type { Readable } from 'node:stream'
import { tooLarge } from '../shared/errors.js'
import { decodedBody } from './body-encoding.js'
import type { Ctx } from './context.js'

export async function readProtocolBody(ctx: Ctx, limit: number, decode: boolean): Promise<Buffer> {
  const refuse = () => {
    // The rest of the body is not read: the connection cannot carry another request.
    ctx.set('Connection', 'close')
    return tooLarge(`request body too large: at most ${limit.toLocaleString('en-US')} bytes per request; send fewer lines per request`)
  }
  if (Number(ctx.get('content-length') || 0) > limit) throw refuse()
  const stream: Readable = decode ? decodedBody(ctx) : ctx.req
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw refuse()
    chunks.push(chunk)
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)
}
