// A local server that speaks the OpenAI-compatible chat-completions protocol
// (POST /v1/chat/completions), for the query model tests. Each request is
// recorded and answered by the current scenario.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type Scenario =
  | { kind: 'content'; content: string }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'text'; body: string }

export interface ChatServer {
  /** Base URL as QUERY_LLM_BASE_URL takes it: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; body: any; raw: string }>
  scenario: Scenario
  close(): Promise<void>
}

export async function startChatServer(): Promise<ChatServer> {
  const hanging = new Set<http.ServerResponse>()
  const state: ChatServer = { baseUrl: '', requests: [], scenario: { kind: 'status', status: 500 }, close: async () => {} }
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')))
    req.on('end', () => {
      let body: unknown
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
      state.requests.push({ path: req.url ?? '', headers: req.headers, body, raw })
      const s = state.scenario
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end()
      if (s.kind === 'hang') return void hanging.add(res)
      if (s.kind === 'status')
        return void res.writeHead(s.status, { 'content-type': 'application/json' }).end('{"error":{"message":"server error"}}')
      if (s.kind === 'text') return void res.writeHead(200, { 'content-type': 'text/html' }).end(s.body)
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: (body as { model?: string })?.model ?? 'test',
          choices: [{ index: 0, message: { role: 'assistant', content: s.content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      )
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  state.close = async () => {
    for (const res of hanging) res.destroy()
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  }
  return state
}
