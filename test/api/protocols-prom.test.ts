// Prometheus remote write 1.0 (docs/decisions.md §21) on POST /api/v1/prom/write: Debian's real prometheus server
// scrapes an endpoint this test serves and remote-writes to the service; the refusals are sent by hand
// (protobufjs + snappy, as Prometheus encodes them). Everything is checked through the v1 export API.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import test, { type ExecutionContext } from 'ava'
import { compressSync } from 'snappy'
import { WriteRequest } from '../helpers/remote-write.js'
import { appSuite } from '../helpers/suite.js'
import { closedPort, request, type Reply } from '../helpers/http.js'
import { keyedAccount, readBack, snapshot } from '../helpers/protocols.js'

const app = appSuite({ workers: true })

const nowS = () => Math.floor(Date.now() / 1000)

type SeriesIn = { labels: Record<string, string>; samples: Array<[number, number]> }
const encode = (series: SeriesIn[]) =>
  Buffer.from(
    WriteRequest.encode(
      WriteRequest.fromObject({
        timeseries: series.map((s) => ({
          labels: Object.entries(s.labels).map(([name, value]) => ({ name, value })),
          samples: s.samples.map(([value, timestamp]) => ({ value, timestamp })),
        })),
      }),
    ).finish(),
  )

async function send(key: string | undefined, body: Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${app.url}/api/v1/prom/write`, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: {
      'content-encoding': 'snappy',
      'content-type': 'application/x-protobuf',
      'x-prometheus-remote-write-version': '0.1.0',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
  })
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text }
}

async function refused(t: ExecutionContext, accountId: string, reply: () => Promise<Reply>, status: number, detail: RegExp, code: string) {
  const before = await snapshot(app, accountId)
  const res = await reply()
  t.is(res.status, status, res.text)
  t.regex(res.headers.get('content-type') ?? '', /problem\+json/)
  t.is(res.body && (res.body as { code: string }).code, code)
  t.regex(String((res.body as { detail?: string })?.detail), detail)
  t.deepEqual(await snapshot(app, accountId), before, 'nothing stored, no allowance used')
}

/** Starts Debian's prometheus, scraping `target` every second and remote-writing to the service with `key`. */
async function startPrometheus(target: string, key: string): Promise<{ proc: ChildProcess; output: () => string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'prom-'))
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: app
    static_configs: [{ targets: ['${target}'] }]
remote_write:
  - url: ${app.url}/api/v1/prom/write
    authorization: { credentials: ${key} }
    queue_config: { batch_send_deadline: 1s, max_samples_per_send: 500, min_backoff: 100ms, max_backoff: 1s }
`,
  )
  const port = await closedPort()
  const proc = spawn(
    process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  proc.stdout!.on('data', (d: Buffer) => (output += d))
  proc.stderr!.on('data', (d: Buffer) => (output += d))
  return {
    proc,
    output: () => output,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r))
        proc.kill('SIGTERM')
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
        if (proc.exitCode === null) proc.kill('SIGKILL')
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

test("24 a real Prometheus scrapes and remote-writes: stats named __name__, the other labels their series' tags, values and ms timestamps truncated to seconds", async (t) => {
  t.timeout(120_000)
  const { key } = await keyedAccount(app, 'pro')
  // Each scrape serves test_fixed with its own explicit millisecond timestamp and a value naming the scrape.
  const servedAt = new Map<number, number>()
  let scrapes = 0
  const target: Server = createServer((_req, res) => {
    scrapes++
    res.setHeader('content-type', 'text/plain; version=0.0.4')
    res.end(
      [
        '# TYPE test_temperature gauge',
        'test_temperature{room="lab",floor="2"} 21.5',
        '# TYPE test_requests_total counter',
        'test_requests_total{code="200",path="/a b"} 42',
        '# TYPE test_fixed gauge',
        `test_fixed ${scrapes} ${servedAt.set(scrapes, Date.now() - 1234).get(scrapes)}`,
        '',
      ].join('\n'),
    )
  })
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r))
  const targetAddr = `127.0.0.1:${(target.address() as AddressInfo).port}`
  const started = nowS()
  const prom = await startPrometheus(targetAddr, key)
  try {
    const inst = targetAddr
    const wanted = [`test_temperature{floor=2,instance=${inst},job=app,room=lab}`, `test_fixed{instance=${inst},job=app}`]
    let got = await readBack(app, key)
    for (let i = 0; i < 180 && !wanted.every((w) => w in got); i++) {
      await new Promise((r) => setTimeout(r, 500))
      got = await readBack(app, key)
    }
    const temp = got[`test_temperature{floor=2,instance=${inst},job=app,room=lab}`]
    t.truthy(temp, `stored: ${Object.keys(got).join(', ')}\n${prom.output().slice(-2000)}`)
    t.is(temp.kind, 'gauge')
    t.true(temp.points.length >= 1)
    t.true(temp.points.every((p) => p.value === 21.5 && p.t >= started - 1 && p.t <= nowS()))
    const req = got[`test_requests_total{code=200,instance=${inst},job=app,path=/a b}`]
    t.truthy(req, 'a counter series is a gauge observation too; a label value keeps its /')
    t.true(req.points.every((p) => p.value === 42))
    const fixed = got[`test_fixed{instance=${inst},job=app}`]?.points ?? []
    t.true(fixed.length >= 1, Object.keys(got).join(', '))
    for (const p of fixed) t.is(p.t, Math.floor(servedAt.get(p.value)! / 1000), 'the explicit ms timestamp, truncated to its second')
    t.truthy(got[`up{instance=${inst},job=app}`], "Prometheus' own series of the scrape arrive too")
    // The stat reads back grouped by a label.
    const byJob = await request(app.url, '/api/v1/stats/test_temperature?range=1h&group_by=job', { bearer: key })
    t.deepEqual(
      byJob.body.groups.map((g: { tags: unknown }) => g.tags),
      [{ job: 'app' }],
    )
    const tags = await request(app.url, '/api/v1/stats/test_temperature/tags', { bearer: key })
    t.deepEqual(
      tags.body.tags.map((k: { key: string }) => k.key),
      ['floor', 'instance', 'job', 'room'],
    )
    t.true(scrapes > 0)
    t.notRegex(prom.output(), /status=4\d\d|non-recoverable/i, 'Prometheus saw no refusal')
  } finally {
    await prom.stop()
    target.close()
  }
})

test('21 stale markers are dropped on purpose; an empty request (metadata only) is 204', async (t) => {
  const { key } = await keyedAccount(app)
  const t0 = nowS() - 30
  // V8 canonicalises a NaN kept in an array of numbers, so the marker's bits are written into the encoded
  // body: the canonical NaN (0x7ff8000000000000, little-endian) becomes Prometheus' StaleNaN (0x7ff0000000000002).
  const encoded = encode([
    {
      labels: { __name__: 'gone', job: 'x' },
      samples: [
        [1, t0 * 1000],
        [Number.NaN, (t0 + 1) * 1000],
      ],
    },
  ])
  const at = encoded.indexOf(Buffer.from('000000000000f87f', 'hex'))
  t.true(at > 0)
  Buffer.from('020000000000f07f', 'hex').copy(encoded, at)
  const body = encoded
  const res = await send(key, compressSync(body))
  t.is(res.status, 204, res.text)
  t.is((await send(key, compressSync(encode([])))).status, 204)
  t.deepEqual((await readBack(app, key))['gone{job=x}']?.points, [{ t: t0, value: 1 }])
})

test('21 refusals: 400 naming the series, 401, 413, 415; nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app)
  const t0 = nowS() - 30
  const good = { labels: { __name__: 'fine', job: 'x' }, samples: [[1, t0 * 1000]] as Array<[number, number]> }
  const c = (series: SeriesIn[]) => compressSync(encode(series))
  const id = user.accountId
  await refused(
    t,
    id,
    () => send(key, c([good, { labels: { __name__: 'bad', job: 'x' }, samples: [[Number.NaN, t0 * 1000]] }])),
    400,
    /^series bad\{job="x"\}: invalid value: not a number/,
    'invalid_series',
  )
  await refused(
    t,
    id,
    () => send(key, c([good, { labels: { __name__: 'inf' }, samples: [[Number.POSITIVE_INFINITY, t0 * 1000]] }])),
    400,
    /^series inf\{\}: invalid value: out of range/,
    'invalid_series',
  )
  await refused(
    t,
    id,
    () => send(key, c([good, { labels: { job: 'x' }, samples: [[1, t0 * 1000]] }])),
    400,
    /no __name__ label/,
    'invalid_series',
  )
  await refused(
    t,
    id,
    () => send(key, c([good, { labels: { __name__: 'old' }, samples: [[1, 946684799000]] }])),
    400,
    /^series old\{\}: invalid timestamp: before 2000-01-01/,
    'invalid_series',
  )
  await refused(
    t,
    id,
    () => send(key, c([good, { labels: { __name__: 'm'.repeat(130), job: 'j' }, samples: [[1, t0 * 1000]] }])),
    400,
    /128 characters/,
    'invalid_series',
  )
  await refused(
    t,
    id,
    () => send(key, c([good, { labels: { __name__: 'm', job: 'j'.repeat(201) }, samples: [[1, t0 * 1000]] }])),
    400,
    /^series m\{job="j+"\}: invalid tag "job": the value must be 1 to 200 characters \(got 201\)/,
    'invalid_series',
  )
  await refused(t, id, () => send(key, encode([good])), 400, /not snappy-compressed/, 'malformed_protobuf')
  await refused(
    t,
    id,
    () => send(key, compressSync(Buffer.from('not a protobuf message at all, really'))),
    400,
    /not a remote-write WriteRequest/,
    'malformed_protobuf',
  )
  await refused(t, id, () => send(key, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0])), 413, /uncompressed/, 'body_too_large')
  await refused(t, id, () => send(key, c([good]), { 'content-encoding': 'gzip' }), 415, /snappy/, 'unsupported_content_encoding')
  await refused(t, id, () => send(undefined, c([good])), 401, /missing credentials/, 'unauthorized')
  await refused(t, id, () => send('mk_000000000000_00000000000000000000000000000000', c([good])), 401, /invalid API key/, 'unauthorized')
})

test('21 plan stat limit 403 and kind conflict 400 as every write route; nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app)
  const t0 = nowS() - 30
  const eleven = Array.from({ length: 11 }, (_, i) => ({
    labels: { __name__: `s${i}` },
    samples: [[1, t0 * 1000]] as Array<[number, number]>,
  }))
  await refused(t, user.accountId, () => send(key, compressSync(encode(eleven))), 403, /tracks at most 10 stats/, 'stat_limit')
  const res = await fetch(`${app.url}/api/v1/stats/hits/count`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{"count":1}',
  })
  t.is(res.status, 200)
  await refused(
    t,
    user.accountId,
    () => send(key, compressSync(encode([{ labels: { __name__: 'hits' }, samples: [[2, t0 * 1000]] }]))),
    400,
    /^series hits\{\}: type conflict: stat "hits" is a counter/,
    'kind_conflict',
  )
})

test("38.5 samples past the day's allowance are refused before they are decoded (403, not the 400 of a bad series); over 100,000 a 413 naming the cap; nothing stored", async (t) => {
  const t0 = nowS() - 30
  const samples = (n: number) => Array.from({ length: n }, (_, i): [number, number] => [i, (t0 - (i % 600)) * 1000])
  const bad = { labels: { __name__: 'bad' }, samples: [[Number.NaN, t0 * 1000]] as Array<[number, number]> }
  const { key, user } = await keyedAccount(app)
  await app.api.deps.redis.set(
    `${app.config.redisPrefix}:points:${user.accountId}:${new Date().toISOString().slice(0, 10)}`,
    100_000 - 3_000,
  )
  await refused(
    t,
    user.accountId,
    () => send(key, compressSync(encode([{ labels: { __name__: 'many' }, samples: samples(3_000) }, bad]))),
    403,
    /^plan limit reached: the free plan records at most 100000 points per day$/,
    'daily_point_limit',
  )
  const pro = await keyedAccount(app, 'pro')
  await refused(
    t,
    pro.user.accountId,
    () => send(pro.key, compressSync(encode([{ labels: { __name__: 'many' }, samples: samples(100_001) }]))),
    413,
    /^request too large: 100,001 samples; at most 100,000 points per request/,
    'body_too_large',
  )
})
