import test from 'ava'
import type { TestApp } from '../helpers/app.js'
import { appSuite } from '../helpers/suite.js'
import { startChatServer, type ChatServer } from '../helpers/chat-completions.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const DAY = 86_400
const HOUR = 3_600

const app = appSuite({ workers: true })
let modelApp: TestApp
let chat: ChatServer
let owner: { user: User; key: string }
const now = Math.floor(Date.now() / 1000)
const today = Math.floor(now / DAY) * DAY
const yesterday = today - DAY
const isoDay = (t: number) => new Date(t * 1000).toISOString().slice(0, 10)

// The seeded account, and the figures a person reads off it by hand.
const POINTS = [
  { stat: 'signups', count: 3, t: yesterday + 10 * HOUR },
  { stat: 'signups', count: 4, t: yesterday + 10 * HOUR + 1800 },
  { stat: 'signups', count: 5, t: yesterday + 14 * HOUR },
  { stat: 'signups', count: 6, t: yesterday - DAY + 8 * HOUR },
  { stat: 'api.latency', value: 100, t: now - 2 * HOUR },
  { stat: 'api.latency', value: 200, t: now - HOUR },
  { stat: 'api.latency', value: 150, t: now - 1800 },
  { stat: 'db.latency', value: 7, t: now - HOUR },
  { stat: 'errors', count: 2, t: yesterday + 3 * HOUR },
  { stat: 'errors', count: 9, t: yesterday + 14 * HOUR },
  { stat: 'errors', count: 4, t: yesterday + 14 * HOUR + 1200 },
  { stat: 'errors', count: 1, t: yesterday + 20 * HOUR },
]

test.before(async () => {
  chat = await startChatServer()
  modelApp = await app.another({
    QUERY_LLM_BASE_URL: chat.baseUrl,
    QUERY_LLM_MODEL: 'narrator',
    QUERY_LLM_API_KEY: 'sk-test-secret',
    QUERY_LLM_TIMEOUT_MS: '300',
  })
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, '/ez', { json: { ezkey: key, data: POINTS.map((p) => ({ ...p, t: String(p.t) })) } })
  if (res.body.accepted !== POINTS.length) throw new Error(res.text)
  await settle(app)
  owner = { user, key }
})
test.serial.after.always(() => chat?.close())

const ask = (body: unknown, base = app.url, bearer = owner.key) => request(base, '/api/v1/query', { json: body, bearer })
const digits = (s: string) => s.replace(/\d{4}-\d{2}-\d{2}|\d{2}:\d{2}/g, '').match(/\d/g)

test('4.6.1 a total: the answer, the data it rests on, the intent, source and verifier', async (t) => {
  const res = await ask({ query: 'How many signups yesterday?' })
  t.is(res.status, 200)
  t.like(res.body, { source: 'deterministic', llm_used: false, verifier: 'passed: 1 of 1 numbers grounded in data' })
  t.regex(res.body.answer, /\b12\b/)
  t.true(res.body.answer.includes(isoDay(yesterday)))
  t.is(res.body.data.length, 1)
  t.like(res.body.data[0], { type: 'retrieved', stat: 'signups', agg: 'sum', value: 12, n: 3 })
  t.like(res.body.intent, { op: 'aggregate', agg: 'sum', stats: ['signups'], timezone: 'UTC' })
  t.is(res.body.intent.window.from, new Date(yesterday * 1000).toISOString())
  t.is(res.body.intent.window.to, new Date(today * 1000).toISOString())
  t.like(res.body.intent.matched[0], { stat: 'signups', how: 'exact' })
})

test('13 a gauge averages by default, with its range and readings, over the last N hours', async (t) => {
  const res = await ask({ query: 'average API latency over the last 6 hours' })
  t.is(res.status, 200)
  t.like(res.body.data[0], { stat: 'api.latency', agg: 'avg', value: 150, min: 100, max: 200, n: 3 })
  t.like(res.body.intent.matched[0], { stat: 'api.latency', how: 'normalised' })
  for (const n of ['150', '100', '200', '3']) t.regex(res.body.answer, new RegExp(`\\b${n}\\b`))
  t.is(res.body.verifier, 'passed: 4 of 4 numbers grounded in data')
})

test('13 two periods compared: both values, the difference and the percentage change are all in data', async (t) => {
  const res = await ask({ query: 'compare signups yesterday with the day before yesterday' })
  t.is(res.status, 200)
  t.like(res.body.intent, { op: 'compare', stats: ['signups'] })
  t.is(res.body.intent.compare_to.from, new Date((yesterday - DAY) * 1000).toISOString())
  const byAgg = Object.fromEntries(res.body.data.map((r: { agg: string; period?: string }) => [`${r.agg}:${r.period ?? ''}`, r]))
  t.like(byAgg['sum:window'], { value: 12 })
  t.like(byAgg['sum:compare_to'], { value: 6 })
  t.like(byAgg['difference:'], { type: 'derived', value: 6, of: [0, 1] })
  t.like(byAgg['pct_change:'], { type: 'derived', value: 100 })
  t.regex(res.body.answer, /up 6 \(\+100%\)/)
  t.regex(res.body.verifier, /^passed: 4 of 4/)
})

test('13 when a stat peaked: the busiest hour of a counter', async (t) => {
  const res = await ask({ query: 'when did errors peak yesterday?' })
  t.is(res.status, 200)
  t.like(res.body.intent, { op: 'peak', stats: ['errors'] })
  t.like(res.body.data[0], { stat: 'errors', value: 13, t: yesterday + 14 * HOUR, bucket_seconds: 3600 })
  t.true(res.body.answer.includes(`${isoDay(yesterday)} 14:00 UTC`))
  t.regex(res.body.answer, /\b13\b/)
})

test('13 which stats were highest: counters ranked by their totals', async (t) => {
  const res = await ask({ query: 'which stat had the most yesterday?' })
  t.is(res.status, 200)
  t.like(res.body.intent, { op: 'rank', agg: 'sum', order: 'desc' })
  t.deepEqual(
    res.body.data.map((r: { stat: string; value: number }) => [r.stat, r.value]),
    [
      ['errors', 16],
      ['signups', 12],
    ],
  )
})

test('13 a stat the engine cannot match with confidence: no number, the closest stats named', async (t) => {
  const res = await ask({ query: 'average latncy today' })
  t.is(res.status, 200)
  t.like(res.body, { source: 'template', llm_used: false, data: [] })
  t.is(res.body.intent.op, 'unknown')
  t.true(res.body.intent.candidates.includes('api.latency'))
  t.true(res.body.intent.candidates.includes('db.latency'))
  t.regex(res.body.answer, /Did you mean .*api\.latency/)
  t.is(digits(res.body.answer.replace(/api\.latency|db\.latency/g, '')), null)
  const unknown = await ask({ query: 'how many widgets were sold yesterday?' })
  t.like(unknown.body, { source: 'template', data: [] })
  t.is(unknown.body.intent.op, 'unknown')
  t.is(digits(unknown.body.answer), null)
})

test('13 questions outside the engine (forecasts) are declined honestly', async (t) => {
  const res = await ask({ query: 'how many signups will we get tomorrow?' })
  t.like(res.body, { source: 'template', data: [] })
  t.is(res.body.intent.op, 'unknown')
  t.regex(res.body.answer, /not happened yet/)
})

test('4.6.1 malformed requests: 400 problem details (missing, empty, too long query; unknown residency)', async (t) => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /^body\.query: /],
    [{ query: '' }, /^body\.query: must not be empty/],
    [{ query: '   ' }, /^body\.query: must not be empty/],
    [{ query: 'x'.repeat(501) }, /^body\.query: must be at most 500 characters/],
    [{ query: 42 }, /^body\.query: /],
    [{ query: 'signups today', residency: 'eu' }, /^body\.residency: /],
  ]
  for (const [body, detail] of cases) {
    const res = await ask(body)
    t.is(res.status, 400, JSON.stringify(body))
    t.regex(res.headers.get('content-type') ?? '', /application\/problem\+json/)
    t.like(res.body, { status: 400, code: 'validation_failed' })
    t.regex(res.body.detail, detail)
  }
  t.is((await ask({ query: 'x'.repeat(500) })).status, 200, 'exactly 500 characters is accepted')
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from stats where account_id = ${owner.user.accountId}`
  t.is(n, 4, 'a question never creates a stat')
})

test('5 auth: Bearer or session; nothing is 401; a session POST needs the CSRF header; answers are scoped to the caller', async (t) => {
  t.is((await request(app.url, '/api/v1/query', { json: { query: 'signups yesterday' } })).status, 401)
  const noCsrf = await request(app.url, '/api/v1/query', {
    json: { query: 'signups yesterday' },
    session: { cookie: owner.user.session.cookie },
  })
  t.is(noCsrf.status, 403)
  const viaSession = await request(app.url, '/api/v1/query', { json: { query: 'signups yesterday' }, session: owner.user.session })
  t.is(viaSession.status, 200)
  t.is(viaSession.body.data[0].value, 12)
  const stranger = await signUp(app.url)
  const other = await request(app.url, '/api/v1/query', { json: { query: 'how many signups yesterday?' }, session: stranger.session })
  t.is(other.status, 200)
  t.like(other.body, { data: [], source: 'template' })
  t.regex(other.body.answer, /no stats yet/)
})

test('OpenAPI documents the route with its residency field', async (t) => {
  const doc = await request(app.url, '/api/v1/openapi.json')
  const op = doc.body.paths['/api/v1/query'].post
  t.truthy(op)
  const schema = JSON.stringify(doc.body)
  t.regex(schema, /"residency"/)
  t.truthy(op.responses['200'])
  t.truthy(op.responses['400'])
})

// ---------------------------------------------------------------- the optional model

const askModel = (query: string, extra: object = {}) => ask({ query, ...extra }, modelApp.url)

test.serial('model: good wording through placeholders is used; the model never sees a number or a stat name', async (t) => {
  chat.scenario = { kind: 'content', content: 'Yesterday {{P1}} brought {{V1}} new {{S1}}.' }
  const before = chat.requests.length
  const res = await askModel('how many signups yesterday?')
  t.like(res.body, { source: 'llm', llm_used: true, verifier: 'passed: 1 of 1 numbers grounded in data (model wording)' })
  t.is(res.body.answer, `Yesterday yesterday (${isoDay(yesterday)} UTC) brought 12 new signups.`)
  const sent = chat.requests.slice(before)
  t.is(sent.length, 1)
  t.is(sent[0].headers.authorization, 'Bearer sk-test-secret')
  t.is(sent[0].body.model, 'narrator')
  const prompt = JSON.stringify(sent[0].body.messages)
  t.false(prompt.includes('signups'), 'stat names stay on our side')
  t.false(/\b12\b/.test(prompt), 'values stay on our side')
  t.true(prompt.includes('{{V1}}'))
})

test.serial('model: an invented number fails the verifier and the deterministic answer is returned', async (t) => {
  chat.scenario = { kind: 'content', content: '{{S1}} reached {{V1}} {{P1}}, about 40 more than usual.' }
  const res = await askModel('how many signups yesterday?')
  t.like(res.body, { source: 'deterministic', llm_used: false })
  t.false(res.body.answer.includes('40'))
  t.regex(res.body.answer, /\b12\b/)
  t.regex(res.body.verifier, /model wording failed: 1 ungrounded number \(40\); deterministic answer returned$/)
})

test.serial('model: a digit outside the placeholders is refused even when it happens to match data', async (t) => {
  // 3 is in data (the observation count), so only the placeholder rule catches it.
  chat.scenario = { kind: 'content', content: '{{S1}} came to {{V1}} {{P1}} over 3 writes.' }
  const res = await askModel('how many signups yesterday?')
  t.like(res.body, { source: 'deterministic', llm_used: false })
  t.regex(res.body.verifier, /model wording refused: digit outside the placeholders \(3\)/)
  t.false(res.body.answer.includes('writes'))
})

test.serial('model: an HTTP 500, a hang past the timeout and a body that is not JSON all fall back', async (t) => {
  chat.scenario = { kind: 'status', status: 500 }
  const e500 = await askModel('how many signups yesterday?')
  t.like(e500.body, { source: 'deterministic', llm_used: false })
  t.regex(e500.body.verifier, /model not used: HTTP 500; deterministic answer returned/)

  chat.scenario = { kind: 'hang' }
  const hang = await askModel('how many signups yesterday?')
  t.like(hang.body, { source: 'deterministic', llm_used: false })
  t.regex(hang.body.verifier, /model not used: no answer within 300 ms/)
  t.regex(hang.body.answer, /\b12\b/)

  chat.scenario = { kind: 'text', body: '<html>upstream error</html>' }
  const html = await askModel('how many signups yesterday?')
  t.like(html.body, { source: 'deterministic', llm_used: false })
  t.regex(html.body.verifier, /model not used: response was not JSON/)
})

test.serial('model: residency "us" fails closed to the deterministic engine and never calls the model', async (t) => {
  chat.scenario = { kind: 'content', content: '{{S1}}: {{V1}} {{P1}}.' }
  const before = chat.requests.length
  const res = await askModel('how many signups yesterday?', { residency: 'us' })
  t.is(res.status, 200)
  t.like(res.body, { source: 'deterministic', llm_used: false })
  t.regex(res.body.verifier, /residency "us" is not available yet/)
  t.is(chat.requests.length, before)
})

test.serial('model: declines are never sent to the model', async (t) => {
  const before = chat.requests.length
  const res = await askModel('how many widgets yesterday?')
  t.like(res.body, { source: 'template', llm_used: false })
  t.is(chat.requests.length, before)
})

test('tags: "by host" answers one figure per host and the whole; "on host web1" and "for host=web2" read those series alone; a stat only written with tags answers as a whole', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  // requests only ever written with a host tag: web1 10 + 5, web2 7, web3 1 yesterday; web1 100 the day before.
  const points = [
    { stat: 'requests', count: 10, tags: { host: 'web1' }, t: yesterday + 9 * HOUR },
    { stat: 'requests', count: 5, tags: { host: 'web1' }, t: yesterday + 15 * HOUR },
    { stat: 'requests', count: 7, tags: { host: 'web2' }, t: yesterday + 11 * HOUR },
    { stat: 'requests', count: 1, tags: { host: 'web3' }, t: yesterday + 12 * HOUR },
    { stat: 'requests', count: 100, tags: { host: 'web1' }, t: yesterday - DAY + 12 * HOUR },
  ]
  t.is((await request(app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(app)
  const q = (query: string) => ask({ query }, app.url, key)

  const whole = await q('how many requests yesterday')
  t.like(whole.body.data[0], { stat: 'requests', agg: 'sum', value: 23 })

  const by = await q('requests yesterday by host')
  t.is(by.status, 200)
  t.like(by.body.intent, { op: 'aggregate', stats: ['requests'], group_by: 'host' })
  t.deepEqual(
    by.body.data.map((d: any) => [d.stat, d.value]),
    [
      ['requests{host=web1}', 15],
      ['requests{host=web2}', 7],
      ['requests{host=web3}', 1],
      ['requests', 23],
    ],
  )
  t.regex(
    by.body.answer,
    /^Total of requests yesterday \([^)]*\), by host: host=web1 15, host=web2 7, host=web3 1\. All of requests together: 23\.$/,
  )
  t.regex(by.body.verifier, /^passed/)

  const on = await q('requests on host web1 yesterday')
  t.like(on.body.intent, { op: 'aggregate', stats: ['requests'], filter: { host: 'web1' } })
  t.like(on.body.data[0], { stat: 'requests{host=web1}', value: 15 })
  t.regex(on.body.answer, /^requests\{host=web1\} totalled 15 yesterday/)
  t.like((await q('total requests for host=web2 yesterday')).body.data[0], { stat: 'requests{host=web2}', value: 7 })
  const cmp = await q('compare requests on host web1 yesterday with the day before yesterday')
  t.like(cmp.body.intent, { op: 'compare', filter: { host: 'web1' } })
  t.deepEqual(
    cmp.body.data.slice(0, 2).map((d: any) => d.value),
    [15, 100],
  )

  const unknown = await q('requests on host web9 yesterday')
  t.like(unknown.body.intent, { op: 'unknown', reason: 'no series of the stat asked about has that tag value' })
  t.is(
    unknown.body.answer,
    "I can't answer that: no series of the stat asked about has that tag value. The series of requests are tagged host=web1, host=web2, host=web3.",
  )
  t.deepEqual(unknown.body.data, [])
  t.regex(unknown.body.verifier, /^passed/)
})
