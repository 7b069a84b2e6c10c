// Small HTTP client for tests: JSON in, parsed JSON (or text) out, cookies by hand.
import { createServer } from 'node:net'

export interface Reply {
  status: number
  headers: Headers
  body: any
  text: string
}

export interface RequestOptions {
  method?: string
  json?: unknown
  form?: string
  body?: string
  headers?: Record<string, string>
  bearer?: string
  session?: { cookie: string; csrf?: string }
}

export async function request(base: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers }
  let body: string | undefined = opts.body
  if (opts.json !== undefined) {
    headers['content-type'] ??= 'application/json'
    body = JSON.stringify(opts.json)
  }
  if (opts.form !== undefined) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded'
    body = opts.form
  }
  if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`
  if (opts.session) {
    headers.cookie = opts.session.cookie
    if (opts.session.csrf) headers['x-service-csrf'] = opts.session.csrf
  }
  const res = await fetch(base + path, { method: opts.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body, redirect: 'manual' })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text }
}

/** The `name=value` part of a Set-Cookie header, ready to send back. */
export function cookieFrom(reply: Reply, name: string): string | undefined {
  for (const c of reply.headers.getSetCookie()) if (c.startsWith(`${name}=`)) return c.split(';')[0]
  return undefined
}

/** A loopback port with nothing listening on it (for "dependency down" tests). */
export async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => srv.close(r))
  return port
}
