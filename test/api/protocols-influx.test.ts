// InfluxDB line protocol (docs/decisions.md §21) on POST /api/v2/write and the 1.x POST /write, driven by the real
// @influxdata/influxdb-client where a client sends it, checked through the v1 export API.
import { gzipSync } from 'node:zlib'
import test, { type ExecutionContext } from 'ava'
import { HttpError, InfluxDB, Point } from '@influxdata/influxdb-client'
import { appSuite } from '../helpers/suite.js'
import { request, type Reply } from '../helpers/http.js'
import { keyedAccount, readBack, snapshot } from '../helpers/protocols.js'

const app = appSuite({ workers: true })

const nowS = () => Math.floor(Date.now() / 1000)

function writeApi(key: string, precision: 'ns' | 'us' | 'ms' | 's') {
  // No retries: a refusal must surface here, not be retried into the next test.
  return new InfluxDB({ url: app.url, token: key }).getWriteApi('my-org', 'my-bucket', precision, {
    maxRetries: 0,
    flushInterval: 0,
    batchSize: 100_000,
  })
}

const lp = (key: string, body: string, query = '?org=o&bucket=b&precision=s', headers: Record<string, string> = {}) =>
  request(app.url, `/api/v2/write${query}`, {
    body,
    headers: { authorization: `Token ${key}`, 'content-type': 'text/plain; charset=utf-8', ...headers },
  })

/** A refused write: status, InfluxDB's v2 error body, and nothing stored at all. */
async function refused(t: ExecutionContext, accountId: string, send: () => Promise<Reply>, status: number, message: RegExp, code: string) {
  const before = await snapshot(app, accountId)
  const res = await send()
  t.is(res.status, status, res.text)
  t.is(res.body?.code, code)
  t.regex(String(res.body?.message), message)
  t.deepEqual(await snapshot(app, accountId), before, 'nothing stored, no allowance used')
  return res
}

test("24 v2 write through @influxdata/influxdb-client: each field a gauge <measurement>.<field>, its tags the series' tags, field value -> <measurement>, 204", async (t) => {
  const { key } = await keyedAccount(app)
  const t0 = nowS() - 120
  const api = writeApi(key, 's')
  api.writePoint(new Point('cpu').tag('zone', 'eu').tag('host', 'web1').floatField('usage', 12.5).intField('idle', 80).timestamp(t0))
  api.writePoint(new Point('temp').floatField('value', -3.25).timestamp(t0 + 1))
  api.writePoint(
    new Point('disk io')
      .tag('dev', 'sd/a')
      .uintField('reads', 7)
      .timestamp(t0 + 2),
  )
  await api.close()
  const got = await readBack(app, key)
  t.deepEqual(got['cpu.usage{host=web1,zone=eu}'], { kind: 'gauge', points: [{ t: t0, value: 12.5 }] })
  t.deepEqual(got['cpu.idle{host=web1,zone=eu}'], { kind: 'gauge', points: [{ t: t0, value: 80 }] })
  t.deepEqual(got.temp, { kind: 'gauge', points: [{ t: t0 + 1, value: -3.25 }] })
  t.deepEqual(got['disk io.reads{dev=sd/a}'], { kind: 'gauge', points: [{ t: t0 + 2, value: 7 }] }, 'a tag value keeps its /')
  t.is(Object.keys(got).length, 4)
  // The stats are the bare field names, each once, and group by their tags.
  const list = await request(app.url, '/api/v1/stats', { bearer: key })
  t.deepEqual(
    list.body.stats.map((s: { name: string; series: number }) => [s.name, s.series]),
    [
      ['cpu.idle', 1],
      ['cpu.usage', 1],
      ['disk io.reads', 1],
      ['temp', 1],
    ],
  )
  const byHost = await request(app.url, '/api/v1/stats/cpu.usage?range=1h&group_by=host', { bearer: key })
  t.deepEqual(
    byHost.body.groups.map((g: { tags: unknown; points: Array<{ value: number }> }) => [g.tags, g.points[0].value]),
    [[{ host: 'web1' }, 12.5]],
  )
})

test('21 precisions ns, us, ms and s are truncated to the same whole second (client library)', async (t) => {
  const { key } = await keyedAccount(app)
  const t0 = nowS() - 300
  for (const [precision, ts] of [
    ['ns', `${t0}999999999`],
    ['us', `${t0}999999`],
    ['ms', `${t0}999`],
    ['s', `${t0}`],
  ] as const) {
    const api = writeApi(key, precision)
    api.writeRecord(`prec,unit=${precision} v=1 ${ts}`)
    await api.close()
  }
  const got = await readBack(app, key)
  for (const unit of ['ns', 'us', 'ms', 's']) t.deepEqual(got[`prec.v{unit=${unit}}`]?.points, [{ t: t0, value: 1 }], unit)
})

test('21 a large batch arrives gzipped from the client and is stored whole; no timestamp means receive time', async (t) => {
  const { key } = await keyedAccount(app, 'pro')
  const api = writeApi(key, 's')
  const before = nowS()
  for (let i = 0; i < 2_000; i++) api.writeRecord(`batch,s=${i % 5} v=${i}`)
  await api.close()
  const after = nowS()
  const got = await readBack(app, key)
  t.is(Object.keys(got).length, 5)
  const points = Object.values(got).flatMap((s) => s.points)
  t.is(points.length, 2_000)
  t.is(
    points.reduce((n, p) => n + p.value, 0),
    (1999 * 2000) / 2,
  )
  t.true(points.every((p) => p.t >= before && p.t <= after))
})

test('21 the 1.x /write takes the key as p, as the Basic password, or as Token; precision and 204 as InfluxDB', async (t) => {
  const { key } = await keyedAccount(app)
  const t0 = nowS() - 60
  const body = (n: number) => `legacy,via=${n} v=${n} ${t0 * 1000}`
  const viaQuery = await request(app.url, `/write?db=telegraf&u=anyone&p=${key}&precision=ms`, { body: body(1) })
  t.is(viaQuery.status, 204, viaQuery.text)
  const basic = `Basic ${Buffer.from(`telegraf:${key}`).toString('base64')}`
  t.is((await request(app.url, '/write?db=telegraf&precision=ms', { body: body(2), headers: { authorization: basic } })).status, 204)
  t.is(
    (await request(app.url, '/write?db=telegraf&precision=ms', { body: body(3), headers: { authorization: `Token ${key}` } })).status,
    204,
  )
  t.is((await request(app.url, '/api/v2/write?precision=ms', { body: body(4), headers: { authorization: `Bearer ${key}` } })).status, 204)
  const got = await readBack(app, key)
  for (const n of [1, 2, 3, 4]) t.deepEqual(got[`legacy.v{via=${n}}`]?.points, [{ t: t0, value: n }])
  const logged = app.logs.join('\n')
  t.false(logged.includes(key), 'the key in ?p= is not logged')
})

test('21 escapes, comments, blank lines and CRLF are read as InfluxDB reads them', async (t) => {
  const { key } = await keyedAccount(app)
  const t0 = nowS() - 30
  const res = await lp(key, `# a comment\r\n\r\nweb\\,app,path=/a\\ b\\=c hits=3i,lat\\ ms=1.5e1 ${t0}\r\n  mem used=4 ${t0}\n`)
  t.is(res.status, 204, res.text)
  const got = await readBack(app, key)
  t.deepEqual(Object.keys(got).sort(), ['mem.used', 'web_app.hits{path=/a b=c}', 'web_app.lat ms{path=/a b=c}'])
  t.deepEqual(got['web_app.lat ms{path=/a b=c}'].points, [{ t: t0, value: 15 }])
})

test('21 a bad line refuses the whole request, 400 naming the line, InfluxDB v2 body; nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app)
  const t0 = nowS() - 10
  const cases: Array<[string, RegExp]> = [
    [`ok v=1 ${t0}\nbad v=abc ${t0}`, /^line 2: field "v": invalid value: not a number/],
    [`ok v=1 ${t0}\nstr v="12" ${t0}`, /^line 2: field "v": invalid value: not a number \(a string field\)/],
    [`ok v=1 ${t0}\nflag v=true ${t0}`, /^line 2: .*not a number/],
    [`ok v=1 ${t0}\n\nnofields ${t0}`, /^line 3: field "\d+": missing "="/],
    [`ok v=1 ${t0}\nnofields`, /^line 2: missing fields/],
    [
      `ok v=1 ${t0}\nneg v=-1u ${t0}`,
      /^line 2: field "v": invalid value "-1u": an unsigned integer \(u\) is never negative \(unable to parse 'neg v=-1u \d+'\)$/,
    ],
    [`ok v=1 ${t0}\nneg,host=a v=2,w=-0u`, /^line 2: field "w": invalid value "-0u": an unsigned integer \(u\) is never negative/],
    [`ok v=1 ${t0}\nbig v=2e15 ${t0}`, /^line 2: field "v": invalid value: out of range/],
    [`ok v=1 ${t0}\nold v=1 946684799`, /^line 2: invalid timestamp: before 2000-01-01/],
    [`ok v=1 ${t0}\nfuture v=1 ${t0 + 3600}`, /^line 2: invalid timestamp: too far in the future/],
    [`ok v=1 ${t0}\nnots v=1 12.5`, /^line 2: invalid timestamp "12.5": not an integer/],
    [`ok v=1 ${t0}\ncpu,host= v=1`, /^line 2: tag "host": empty value/],
    [`ok v=1 ${t0}\n${'m'.repeat(130)},host=a v=1`, /^line 2: invalid stat name: .*128 characters/],
    [`ok v=1 ${t0}\ncpu,host=${'h'.repeat(201)} v=1`, /^line 2: invalid tag "host": the value must be 1 to 200 characters \(got 201\)/],
  ]
  for (const [body, message] of cases) await refused(t, user.accountId, () => lp(key, body), 400, message, 'invalid')
  const viaClient = writeApi(key, 's')
  viaClient.writeRecords([`ok v=1 ${t0}`, `bad v=abc ${t0}`])
  const err = await viaClient.close().then(
    () => undefined,
    (e: unknown) => e,
  )
  t.true(err instanceof HttpError, String(err))
  t.is((err as HttpError).statusCode, 400)
  t.regex((err as HttpError).message, /line 2: field "v": invalid value: not a number/, 'the client shows the line')
})

test('21 the 1.x route answers {"error"} and X-Influxdb-Error', async (t) => {
  const { key, user } = await keyedAccount(app)
  const before = await snapshot(app, user.accountId)
  const res = await request(app.url, `/write?db=x&p=${key}`, { body: 'a v=1\nb v=x' })
  t.is(res.status, 400)
  t.regex(res.body.error, /^line 2: field "v"/)
  t.regex(res.headers.get('x-influxdb-error') ?? '', /^line 2/)
  t.deepEqual(await snapshot(app, user.accountId), before)
})

test('21 credentials: none, unknown, malformed -> 401; bad precision -> 400; nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app)
  await refused(t, user.accountId, () => request(app.url, '/api/v2/write', { body: 'a v=1' }), 401, /missing credentials/, 'unauthorized')
  await refused(
    t,
    user.accountId,
    () => lp('mk_000000000000_00000000000000000000000000000000', 'a v=1'),
    401,
    /invalid API key/,
    'unauthorized',
  )
  await refused(
    t,
    user.accountId,
    () => request(app.url, '/api/v2/write', { body: 'a v=1', headers: { authorization: 'Token' } }),
    401,
    /invalid API key/,
    'unauthorized',
  )
  const v1 = await request(app.url, '/write?u=x&p=wrong', { body: 'a v=1' })
  t.is(v1.status, 401)
  t.is(v1.body.error, 'invalid API key')
  await refused(t, user.accountId, () => lp(key, 'a v=1', '?precision=minutes'), 400, /invalid precision/, 'invalid')
})

test('21 kind conflict with a counter written elsewhere names the line; 400, nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app)
  t.is((await request(app.url, '/api/v1/stats/hits/count', { json: { count: 1 }, bearer: key })).status, 200)
  await refused(
    t,
    user.accountId,
    () => lp(key, 'other v=1\nhits value=2'),
    400,
    /^line 2: type conflict: stat "hits" is a counter/,
    'invalid',
  )
})

test('21 quotas as every write route: stat limit 403, daily points 403, nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app)
  // Free plan: 10 stats. Eleven fields on one line are eleven stats.
  const fields = Array.from({ length: 11 }, (_, i) => `f${i}=1`).join(',')
  await refused(t, user.accountId, () => lp(key, `many ${fields}`), 403, /tracks at most 10 stats/, 'forbidden')
  const { key: k2, user: u2 } = await keyedAccount(app)
  await app.sql`update accounts set plan = 'free' where id = ${u2.accountId}`
  const redisKey = `${app.config.redisPrefix}:points:${u2.accountId}:${new Date().toISOString().slice(0, 10)}`
  await app.api.deps.redis.set(redisKey, 100_000 - 1)
  const before = await snapshot(app, u2.accountId)
  const res = await lp(k2, 'a v=1\na v=2')
  t.is(res.status, 403, res.text)
  t.regex(res.body.message, /at most 100000 points per day/)
  t.deepEqual(await snapshot(app, u2.accountId), before)
})

test('21 rate limit: 429 with Retry-After as every write route', async (t) => {
  const { key } = await keyedAccount(app)
  // At once, so that the bucket's refill (20 a second on free) cannot keep up however slow the machine is.
  const replies = await Promise.all(Array.from({ length: 200 }, () => lp(key, '')))
  t.deepEqual([...new Set(replies.map((r) => r.status))].sort(), [204, 429])
  const limited = replies.find((r) => r.status === 429)
  t.truthy(limited, "the free plan's burst of 100 runs out")
  t.is(limited!.body.code, 'too many requests')
  t.truthy(limited!.headers.get('retry-after'))
})

test('21 a body over the limit is 413; a gzip body that is not gzip is 400', async (t) => {
  const { key, user } = await keyedAccount(app)
  const line = 'x v=1\n'
  await refused(
    t,
    user.accountId,
    () => lp(key, line.repeat(Math.ceil((10 * 1024 * 1024 + 1) / line.length))),
    413,
    /too large/,
    'request too large',
  )
  const res = await fetch(`${app.url}/api/v2/write`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-encoding': 'gzip' },
    body: 'not gzip',
  })
  t.is(res.status, 400)
  const ok = await fetch(`${app.url}/api/v2/write`, {
    method: 'POST',
    headers: { authorization: `Token ${key}`, 'content-encoding': 'gzip' },
    body: gzipSync('gz v=5'),
  })
  t.is(ok.status, 204)
})

test("38.5 a body past the day's allowance is refused before it is parsed: 403, not the 400 of its bad last line; nothing stored", async (t) => {
  const { key, user } = await keyedAccount(app)
  await app.api.deps.redis.set(
    `${app.config.redisPrefix}:points:${user.accountId}:${new Date().toISOString().slice(0, 10)}`,
    100_000 - 3_000,
  )
  // 3,001 lines, the last of them bad: the old code parsed all of them first and answered the bad line.
  const body = `${'ok v=1\n'.repeat(3_000)}bad v=abc`
  await refused(
    t,
    user.accountId,
    () => lp(key, body),
    403,
    /^plan limit reached: the free plan records at most 100000 points per day$/,
    'forbidden',
  )
})

test('38.5 more than 100,000 points in one request is a 413 naming the cap, counted by lines before parsing or by fields while parsing; nothing stored', async (t) => {
  const { key, user } = await keyedAccount(app, 'pro')
  await refused(
    t,
    user.accountId,
    () => lp(key, `${'ok v=1\n'.repeat(100_000)}bad v=abc`),
    413,
    /^request too large: 100,001 lines; at most 100,000 points per request/,
    'request too large',
  )
  await refused(
    t,
    user.accountId,
    () => lp(key, 'two v=1,w=2\n'.repeat(50_001)),
    413,
    /^request too large: more than 100,000 points; at most 100,000 points per request/,
    'request too large',
  )
})
