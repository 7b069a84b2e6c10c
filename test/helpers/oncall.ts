// Local servers that speak the on-call tools' protocols (docs/decisions.md §23), keeping the state those tools
// keep: PagerDuty's Events API v2 (POST /v2/enqueue: trigger/resolve by dedup_key, routing_key in the body)
// and Opsgenie's Alert API (POST /v2/alerts with a GenieKey, close by alias). `loseNext(n)` processes the next
// n requests and then answers 503, as when a response is lost: the sender retries and the tool must dedupe.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface OnCallAlert {
  key: string
  open: boolean
  /** Triggers/creates received for it while open (the tool's dedup count). */
  count: number
  opened: number
  closed: number
}

export interface OnCallServer {
  url: string
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; json: any; status: number }>
  alerts: Map<string, OnCallAlert>
  loseNext(n: number): void
  close(): Promise<void>
}

async function serve(handle: (req: http.IncomingMessage, json: any) => { status: number; body: unknown }, path: string) {
  const requests: OnCallServer['requests'] = []
  let lose = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let json: any
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null')
      } catch {
        json = undefined
      }
      let { status, body } = json === undefined ? { status: 400, body: { message: 'invalid JSON' } } : handle(req, json)
      if (lose > 0 && status < 300) {
        lose--
        status = 503
        body = { message: 'lost' }
      }
      requests.push({ path: req.url ?? '', headers: req.headers, json, status })
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    loseNext(n: number) {
      lose = n
    },
    close() {
      server.closeAllConnections()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}

function openOrCount(alerts: Map<string, OnCallAlert>, key: string) {
  const a = alerts.get(key)
  if (a?.open) a.count++
  else alerts.set(key, { key, open: true, count: 1, opened: (a?.opened ?? 0) + 1, closed: a?.closed ?? 0 })
}

/** PagerDuty Events API v2: 202 {status, message, dedup_key}; 400 for an invalid event. */
export async function startPagerDuty(routingKey: string): Promise<OnCallServer> {
  const alerts = new Map<string, OnCallAlert>()
  const s = await serve((req, e) => {
    if (req.method !== 'POST' || req.url !== '/v2/enqueue') return { status: 404, body: { message: 'not found' } }
    if (e?.routing_key !== routingKey) return { status: 400, body: { status: 'invalid event', message: 'routing_key is invalid' } }
    if (typeof e.dedup_key !== 'string' || !e.dedup_key || e.dedup_key.length > 255)
      return { status: 400, body: { status: 'invalid event', message: 'dedup_key' } }
    if (e.event_action === 'trigger') {
      const p = e.payload
      if (
        !p ||
        typeof p.summary !== 'string' ||
        p.summary.length > 1024 ||
        typeof p.source !== 'string' ||
        !['critical', 'error', 'warning', 'info'].includes(p.severity)
      )
        return { status: 400, body: { status: 'invalid event', message: 'payload' } }
      openOrCount(alerts, e.dedup_key)
    } else if (e.event_action === 'resolve') {
      const a = alerts.get(e.dedup_key)
      // Resolving an unknown or resolved key is dropped, as PagerDuty does.
      if (a?.open) {
        a.open = false
        a.closed++
      }
    } else return { status: 400, body: { status: 'invalid event', message: 'event_action' } }
    return { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: e.dedup_key } }
  }, '/v2/enqueue')
  return { ...s, url: s.url, alerts }
}

/** Opsgenie Alert API: 202 {result, took, requestId}; 401/403 without the right GenieKey. */
export async function startOpsgenie(apiKey: string): Promise<OnCallServer> {
  const alerts = new Map<string, OnCallAlert>()
  let n = 0
  const s = await serve((req, body) => {
    if (req.headers.authorization !== `GenieKey ${apiKey}`) return { status: 401, body: { message: 'Could not authenticate' } }
    const accepted = { status: 202, body: { result: 'Request will be processed', took: 0.01, requestId: `req-${++n}` } }
    const url = new URL(req.url ?? '/', 'http://x')
    if (req.method === 'POST' && url.pathname === '/v2/alerts') {
      if (typeof body?.message !== 'string' || !body.message || body.message.length > 130 || (body.alias && body.alias.length > 512))
        return { status: 422, body: { message: 'Request body is not processable' } }
      openOrCount(alerts, body.alias ?? `id-${n}`)
      return accepted
    }
    const close = /^\/v2\/alerts\/([^/]+)\/close$/.exec(url.pathname)
    if (req.method === 'POST' && close && url.searchParams.get('identifierType') === 'alias') {
      const a = alerts.get(decodeURIComponent(close[1]))
      if (a?.open) {
        a.open = false
        a.closed++
      }
      return accepted
    }
    return { status: 404, body: { message: 'not found' } }
  }, '')
  return { ...s, alerts }
}
