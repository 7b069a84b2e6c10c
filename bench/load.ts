// The load generator, run as its own process (`node --import tsx bench/load.ts`)
// so that it never shares an event loop with the servers it measures. It keeps
// N keep-alive connections busy with prebuilt HTTP/1.1 requests (one in flight
// per connection, no pipelining), bounded by time and by request count. It
// reads a JSON LoadConfig on stdin and prints one JSON LoadResult line on stdout.
//
// It speaks HTTP over raw sockets with a minimal response parser instead of
// node:http's client, the way autocannon does, because on a 2-core machine
// every cycle the load tool spends is taken from the servers under test.
import net from 'node:net'
import { pathToFileURL } from 'node:url'
import { percentile } from './stats.js'

export interface Target {
  host: string
  port: number
}

export interface RequestSpec {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
  /** A binary body (protobuf), base64 in the config: what is sent is the decoded bytes. */
  bodyBase64?: string
}

export interface LoadStage {
  durationMs: number
  /** Connection i cycles through groups[i % groups.length] (for instance one group per account). */
  groups: RequestSpec[][]
  /** Stops sending once this many requests were sent (0: no bound but time). */
  maxRequests?: number
}

export interface LoadConfig {
  targets: Target[]
  connections: number
  /** Runs first on the same connections; nothing of it is reported. */
  warmup?: LoadStage
  measure: LoadStage
  /** A request without an answer after this long is counted as a timeout and its socket replaced. */
  requestTimeoutMs?: number
  /** Print a line "measuring" when the measured stage starts. */
  announceMeasure?: boolean
  /** How long in-flight requests may take to finish once the stage is over. */
  graceMs?: number
}

export interface LoadResult {
  connections: number
  /** Epoch ms of the first measured request sent and of the last response received. */
  firstSendAt: number
  lastResponseAt: number
  windowMs: number
  sent: number
  completed: number
  /** Responses whose JSON body has `status: 200` (the verdict of the legacy envelope), v1 answers HTTP 200 `status: "ok"`, or an empty 204 or 200 (InfluxDB, OTLP). */
  accepted: number
  /** Sum of the `accepted` counts in those bodies (batch answers carry one); null when none did. */
  acceptedItems: number | null
  requestsPerSec: number
  acceptedPerSec: number
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number }
  httpStatus: Record<string, number>
  bodyStatus: Record<string, number>
  /** Most frequent messages of responses that were not accepted, with counts. */
  rejections: Array<{ http: number; msg: string; count: number }>
  socketErrors: Record<string, number>
  timeouts: number
  /** Requests sent whose answer never came (outcome unknown). */
  unanswered: number
  /** Answers to the warmup stage (not in any other figure). */
  warmupCompleted: number
  /** CPU time this load generator process used, warmup included (ms). */
  cpuMs: number
  /** Set by the bench for a reference server: its processes' CPU per answered request over the measured window (µs). */
  cpuUsPerRequest?: number
}

const CRLF = '\r\n'

function encodeRequest(r: RequestSpec, target: Target): Buffer {
  const body = r.bodyBase64 !== undefined ? Buffer.from(r.bodyBase64, 'base64') : r.body === undefined ? undefined : Buffer.from(r.body)
  let head = `${r.method} ${r.path} HTTP/1.1${CRLF}Host: ${target.host}:${target.port}${CRLF}User-Agent: metrics-bench/1${CRLF}Connection: keep-alive${CRLF}`
  for (const [k, v] of Object.entries(r.headers ?? {})) head += `${k}: ${v}${CRLF}`
  if (body) head += `Content-Length: ${body.length}${CRLF}`
  head += CRLF
  return body ? Buffer.concat([Buffer.from(head), body]) : Buffer.from(head)
}

interface Parsed {
  status: number
  body: Buffer
  close: boolean
  /** Bytes of the buffer this response used. */
  used: number
}

const HEADER_END = Buffer.from('\r\n\r\n')

/** Parses one complete response from the start of buf, or returns null when more bytes are needed. */
export function parseResponse(buf: Buffer): Parsed | null {
  const end = buf.indexOf(HEADER_END)
  if (end < 0) return null
  const head = buf.toString('latin1', 0, end)
  const lines = head.split(CRLF)
  const status = Number(lines[0].split(' ')[1])
  let length = -1
  let chunked = false
  let close = false
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]
    const colon = line.indexOf(':')
    if (colon < 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line
      .slice(colon + 1)
      .trim()
      .toLowerCase()
    if (name === 'content-length') length = Number(value)
    else if (name === 'transfer-encoding' && value.includes('chunked')) chunked = true
    else if (name === 'connection' && value === 'close') close = true
  }
  const start = end + 4
  if (chunked) {
    const parts: Buffer[] = []
    let pos = start
    for (;;) {
      const lineEnd = buf.indexOf(CRLF, pos)
      if (lineEnd < 0) return null
      const size = parseInt(buf.toString('latin1', pos, lineEnd), 16)
      if (size === 0) {
        // Trailers are not used by anyone here: expect the final CRLF.
        if (buf.length < lineEnd + 4) return null
        return { status, body: Buffer.concat(parts), close, used: lineEnd + 4 }
      }
      if (buf.length < lineEnd + 2 + size + 2) return null
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size))
      pos = lineEnd + 2 + size + 2
    }
  }
  // Without a length (or chunking) the servers here send no body.
  if (length < 0) length = 0
  if (buf.length < start + length) return null
  return { status, body: buf.subarray(start, start + length), close, used: start + length }
}

class Recorder {
  latencies = new Float64Array(1 << 16)
  n = 0
  sent = 0
  completed = 0
  accepted = 0
  acceptedItems: number | null = null
  timeouts = 0
  firstSendAt = 0
  lastResponseAt = 0
  httpStatus: Record<string, number> = {}
  bodyStatus: Record<string, number> = {}
  rejections = new Map<string, { http: number; msg: string; count: number }>()
  socketErrors: Record<string, number> = {}

  latency(ms: number): void {
    if (this.n === this.latencies.length) {
      const bigger = new Float64Array(this.latencies.length * 2)
      bigger.set(this.latencies)
      this.latencies = bigger
    }
    this.latencies[this.n++] = ms
  }

  response(status: number, body: Buffer): void {
    this.completed++
    this.lastResponseAt = Date.now()
    this.httpStatus[status] = (this.httpStatus[status] ?? 0) + 1
    let verdict = 'unparsable'
    let msg = ''
    // InfluxDB (the peer reference) says "written" with an empty 204.
    // OTLP says "all taken" with a 200 whose protobuf body is empty (no partial_success).
    if ((status === 204 || status === 200) && body.length === 0) {
      this.bodyStatus[String(status)] = (this.bodyStatus[String(status)] ?? 0) + 1
      this.accepted++
      return
    }
    try {
      const json = JSON.parse(body.toString('utf8')) as {
        status?: unknown
        msg?: unknown
        message?: unknown
        error?: unknown
        accepted?: unknown
      }
      // The legacy envelope says {"status": 200}; the v1 API answers HTTP 200 with {"status": "ok"}.
      const ok = json.status === 200 || (status === 200 && json.status === 'ok')
      verdict = ok ? '200' : String(json.status)
      if (ok && typeof json.accepted === 'number') this.acceptedItems = (this.acceptedItems ?? 0) + json.accepted
      msg = String(json.msg ?? json.message ?? json.error ?? '')
    } catch {
      msg = body.toString('utf8', 0, Math.min(body.length, 120))
    }
    this.bodyStatus[verdict] = (this.bodyStatus[verdict] ?? 0) + 1
    if (verdict === '200') {
      this.accepted++
      return
    }
    const key = `${status} ${msg}`.slice(0, 160)
    const entry = this.rejections.get(key)
    if (entry) entry.count++
    else if (this.rejections.size < 200) this.rejections.set(key, { http: status, msg: msg.slice(0, 150), count: 1 })
  }

  error(code: string): void {
    this.socketErrors[code] = (this.socketErrors[code] ?? 0) + 1
  }

  result(connections: number, warmupCompleted = 0): LoadResult {
    const lat = this.latencies.subarray(0, this.n).sort()
    const windowMs = Math.max(1, this.lastResponseAt - this.firstSendAt)
    let sum = 0
    for (let i = 0; i < lat.length; i++) sum += lat[i]
    const round = (x: number) => Math.round(x * 100) / 100
    return {
      connections,
      firstSendAt: this.firstSendAt,
      lastResponseAt: this.lastResponseAt,
      windowMs,
      sent: this.sent,
      completed: this.completed,
      accepted: this.accepted,
      acceptedItems: this.acceptedItems,
      requestsPerSec: Math.round((this.completed / windowMs) * 1000),
      acceptedPerSec: Math.round((this.accepted / windowMs) * 1000),
      latencyMs: {
        p50: round(percentile(lat, 0.5)),
        p90: round(percentile(lat, 0.9)),
        p99: round(percentile(lat, 0.99)),
        max: round(lat.length ? lat[lat.length - 1] : NaN),
        mean: round(lat.length ? sum / lat.length : NaN),
      },
      httpStatus: this.httpStatus,
      bodyStatus: this.bodyStatus,
      rejections: [...this.rejections.values()].sort((a, b) => b.count - a.count).slice(0, 10),
      socketErrors: this.socketErrors,
      timeouts: this.timeouts,
      unanswered: this.sent - this.completed,
      warmupCompleted,
      cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
    }
  }
}

/** One keep-alive connection that sends the next request as soon as the previous answer arrived. */
class Connection {
  private socket: net.Socket | null = null
  private buf: Buffer = Buffer.alloc(0)
  private inFlightSince = 0
  private next = 0
  private timer: NodeJS.Timeout | null = null
  private requests: Buffer[] = []
  private rec: Recorder | null = null
  private stage: { until: number; budget: { left: number }; done: () => void } | null = null

  constructor(
    private readonly target: Target,
    private readonly timeoutMs: number,
  ) {}

  /** Runs one stage: keeps requesting until the deadline or the shared budget is spent, then resolves when idle. */
  run(requests: RequestSpec[], until: number, budget: { left: number }, rec: Recorder): Promise<void> {
    this.requests = requests.map((r) => encodeRequest(r, this.target))
    this.next = Math.floor(Math.random() * this.requests.length)
    this.rec = rec
    return new Promise<void>((resolve) => {
      this.stage = { until, budget, done: resolve }
      this.send()
    })
  }

  private connect(): net.Socket {
    const socket = net.connect({ host: this.target.host, port: this.target.port, noDelay: true })
    socket.on('data', (chunk: Buffer) => this.onData(socket, chunk))
    socket.on('error', (err: NodeJS.ErrnoException) => this.rec?.error(err.code ?? err.message))
    socket.on('close', () => this.onClose(socket))
    this.buf = Buffer.alloc(0)
    this.socket = socket
    return socket
  }

  private send(): void {
    const stage = this.stage
    if (!stage) return
    if (Date.now() >= stage.until || stage.budget.left <= 0) {
      this.stage = null
      stage.done()
      return
    }
    stage.budget.left--
    const rec = this.rec!
    const socket = this.socket && !this.socket.destroyed ? this.socket : this.connect()
    this.inFlightSince = performance.now()
    if (rec.sent === 0) rec.firstSendAt = Date.now()
    rec.sent++
    socket.write(this.requests[this.next])
    this.next = (this.next + 1) % this.requests.length
    this.timer = setTimeout(() => {
      this.rec!.timeouts++
      this.inFlightSince = 0
      this.socket?.destroy()
      this.socket = null
      this.send()
    }, this.timeoutMs)
  }

  private onData(socket: net.Socket, chunk: Buffer): void {
    if (socket !== this.socket) return
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk
    const parsed = parseResponse(this.buf)
    if (!parsed) return
    this.buf = this.buf.subarray(parsed.used)
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (this.inFlightSince) {
      this.rec!.latency(performance.now() - this.inFlightSince)
      this.rec!.response(parsed.status, parsed.body)
      this.inFlightSince = 0
    }
    if (parsed.close) {
      socket.destroy()
      this.socket = null
    }
    this.send()
  }

  private onClose(socket: net.Socket): void {
    if (socket !== this.socket) return
    this.socket = null
    if (this.inFlightSince) {
      // The server closed (or refused) while a request was in flight: its outcome is unknown.
      if (this.timer) clearTimeout(this.timer)
      this.timer = null
      this.inFlightSince = 0
      this.rec!.error('closed_in_flight')
      // Back off a little so a dead server does not turn into a busy loop.
      setTimeout(() => this.send(), 20)
    }
  }

  /** Waits for the in-flight request (if any) up to graceMs; then closes the socket. */
  async drain(graceMs: number): Promise<void> {
    const until = performance.now() + graceMs
    while (this.inFlightSince && performance.now() < until) await new Promise((r) => setTimeout(r, 5))
    if (this.timer) clearTimeout(this.timer)
    this.socket?.destroy()
    this.socket = null
  }
}

async function runStage(conns: Connection[], stage: LoadStage, rec: Recorder, graceMs: number): Promise<void> {
  const until = Date.now() + stage.durationMs
  const budget = { left: stage.maxRequests && stage.maxRequests > 0 ? stage.maxRequests : Number.POSITIVE_INFINITY }
  const groups = stage.groups
  // Stage end waits for every connection's last answer (bounded by the request timeout).
  const ends = conns.map((c, i) => c.run(groups[i % groups.length], until, budget, rec))
  await Promise.race([Promise.all(ends), new Promise((r) => setTimeout(r, stage.durationMs + graceMs))])
}

/** Runs the warmup (if any) and the measured stage in this process. */
export async function runLoad(cfg: LoadConfig): Promise<LoadResult> {
  const timeoutMs = cfg.requestTimeoutMs ?? 10_000
  const graceMs = cfg.graceMs ?? 10_000
  const conns: Connection[] = []
  const perGroup = Math.max(1, cfg.measure.groups.length)
  for (let i = 0; i < cfg.connections; i++) {
    // Spread each request group over the targets: connections i, i+G, i+2G... alternate targets.
    conns.push(new Connection(cfg.targets[Math.floor(i / perGroup) % cfg.targets.length], timeoutMs))
  }
  const warm = new Recorder()
  if (cfg.warmup && cfg.warmup.durationMs > 0) await runStage(conns, cfg.warmup, warm, graceMs)
  const rec = new Recorder()
  // Told on stdout, so that the bench can take readings at the start of the measured stage.
  if (cfg.announceMeasure) process.stdout.write('measuring\n')
  await runStage(conns, cfg.measure, rec, graceMs)
  await Promise.all(conns.map((c) => c.drain(1000)))
  return rec.result(cfg.connections, warm.completed)
}

async function main(): Promise<void> {
  // The JSON LoadConfig arrives on stdin.
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks).toString('utf8')
  if (!raw.trim()) throw new Error('a JSON LoadConfig is expected on stdin')
  const cfg = JSON.parse(raw) as LoadConfig
  for (const t of cfg.targets) if (t.host !== '127.0.0.1') throw new Error(`load targets must be 127.0.0.1, got ${t.host}`)
  const result = await runLoad(cfg)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`load generator failed: ${(err as Error).stack ?? err}\n`)
    process.exit(1)
  })
}
