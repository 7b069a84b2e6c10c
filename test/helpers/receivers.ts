// Local stand-ins for the outside world of alert deliveries: an HTTP receiver
// (webhook or Slack incoming webhook) and an SMTP server. Both listen on
// 127.0.0.1 only and record what they get, so tests never send traffic off
// the machine.
import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

/** Polls `probe` until it returns a truthy value, and returns it; throws with `what` after `timeoutMs`. */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(intervalMs)
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// ------------------------------------------------------------------ HTTP

export interface ReceivedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** The raw body, exactly as received (signatures are computed over it). */
  body: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any
  /** The status this receiver answered with. */
  status: number
  at: number
}

export interface HttpReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string
  port: number
  /** Every request received, answered or refused, in arrival order. */
  requests: ReceivedRequest[]
  /** Requests answered with a 2xx. */
  accepted(): ReceivedRequest[]
  /** Answer the next `n` requests with `status` (503 by default), then 200 again. */
  failNext(n: number, status?: number): void
  /** Answer every request with `status` from now on (200 restores normal service). */
  answerAlways(status: number): void
  /** Waits until at least `n` requests matching `pred` have arrived; returns them. */
  waitFor(n: number, pred?: (r: ReceivedRequest) => boolean, timeoutMs?: number): Promise<ReceivedRequest[]>
  close(): Promise<void>
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = []
  let failures = 0
  let failStatus = 503
  let always = 200
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(body)
      } catch {}
      let status = always
      if (failures > 0) {
        failures--
        status = failStatus
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, status, at: Date.now() })
      res.writeHead(status, { 'content-type': 'text/plain' })
      res.end(status < 300 ? 'ok' : 'unavailable')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const accepted = () => requests.filter((r) => r.status >= 200 && r.status < 300)
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    accepted,
    failNext(n, status = 503) {
      failures = n
      failStatus = status
    },
    answerAlways(status) {
      always = status
    },
    async waitFor(n, pred = () => true, timeoutMs = 30_000) {
      return eventually(
        () => {
          const hits = requests.filter(pred)
          return hits.length >= n ? hits : null
        },
        `${n} matching request(s) at the HTTP receiver (got ${requests.length} in all)`,
        timeoutMs,
      )
    },
    close() {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

// ------------------------------------------------------------------ SMTP

export interface ReceivedMail {
  from: string
  to: string[]
  /** The message as received over SMTP. */
  raw: string
  /** Header values, unfolded, names lower-cased (the first of each name). */
  headers: Record<string, string>
  subject: string
  /** The decoded text body (7bit, quoted-printable or base64 single-part messages). */
  text: string
}

export interface SmtpReceiver {
  /** `smtp://127.0.0.1:<port>`, ready for SMTP_URL. */
  url: string
  mails: ReceivedMail[]
  /** Waits until at least `n` mails matching `pred` have arrived; returns them. */
  waitFor(n: number, pred?: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail[]>
  close(): Promise<void>
}

function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8'),
  )
}

/** Parses a single-part message: headers (unfolded) and the body decoded by its Content-Transfer-Encoding. */
export function parseMail(raw: string): { headers: Record<string, string>; subject: string; text: string } {
  const split = raw.indexOf('\r\n\r\n')
  const head = split < 0 ? raw : raw.slice(0, split)
  const body = split < 0 ? '' : raw.slice(split + 4)
  const headers: Record<string, string> = {}
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const i = line.indexOf(':')
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] ??= line.slice(i + 1).trim()
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase()
  let text: string
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16)))
    text = Buffer.from(bytes, 'latin1').toString('utf8')
  } else if (encoding === 'base64') {
    text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  } else {
    text = body
  }
  return { headers, subject: decodeWords(headers.subject ?? ''), text: text.replace(/\r\n/g, '\n') }
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = []
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS (nodemailer would try it and refuse the self-signed certificate), no AUTH.
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
        mails.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw, ...parseMail(raw) })
        callback()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.server.address() as AddressInfo).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(n, pred = () => true, timeoutMs = 30_000) {
      return eventually(
        () => {
          const hits = mails.filter(pred)
          return hits.length >= n ? hits : null
        },
        `${n} matching mail(s) at the SMTP server (got ${mails.length} in all)`,
        timeoutMs,
      )
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
