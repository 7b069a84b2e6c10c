// Client errors as 400s, outbound targets, headers and links, slow clients and content types.
import test from 'ava'
import { gzipSync } from 'node:zlib'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite()

test('item 4: from/to dates PostgreSQL cannot hold are a 400 naming the field, on stat detail and export', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })).status, 200)
  for (const [path, field] of [
    ['/api/v1/stats/s?from=0000-01-01', 'from'],
    ['/api/v1/stats/s?to=0001-01-01', 'to'],
    ['/api/v1/stats/s?from=1969-12-31&to=2020-01-01', 'from'],
    ['/api/v1/export?to=0001-01-01', 'to'],
    ['/api/v1/stats/s/export?from=0000-01-01&to=2020-01-01', 'from'],
  ] as const) {
    const res = await request(app.url, path, { bearer: key })
    t.is(res.status, 400, path)
    t.is(res.body.code, 'invalid_date', path)
    t.is(res.body.detail, `invalid ${field}: must be between 1970-01-01 and 9999-12-31`, path)
  }
  t.is((await request(app.url, '/api/v1/stats/s?from=1970-01-01', { bearer: key })).status, 200, 'the bound itself is fine')
  t.false(
    app.logs.some((l) => l.includes('unhandled error')),
    'no 500 was logged',
  )
})

test('item 4: a Content-Encoding header on a body that is not compressed that way is a 400; a real gzip body works', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const res = await request(app.url, '/api/v1/stats/s/count', {
      body: '{"count":1}',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      bearer: key,
    })
    t.is(res.status, 400, encoding)
    t.is(res.body.code, 'malformed_body')
    t.regex(res.body.detail, /^request body could not be decompressed as its Content-Encoding says/)
  }
  const [{ n }] = await app.sql`select count(*)::int as n from stats where account_id = ${user.accountId}`
  t.is(n, 0, 'nothing stored')
  const res = await fetch(`${app.url}/api/v1/stats/s/count`, {
    method: 'POST',
    body: gzipSync('{"count":1}'),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${key}` },
  })
  t.is(res.status, 200)
  t.false(
    app.logs.some((l) => l.includes('unhandled error')),
    'no 500 was logged',
  )
})

test('item 5: alerts to IPv6 forms that embed loopback are refused at create, naming WEBHOOK_ALLOW_PRIVATE; nothing stored', async (t) => {
  const strict = await app.another({ WEBHOOK_ALLOW_PRIVATE: '0' })
  const user = await signUp(strict.url)
  const { key } = await createKey(strict.url, user)
  for (const url of [
    'http://[::ffff:0:7f00:1]/',
    'http://[::ffff:0:127.0.0.1]/',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'http://127.0.0.1:9/',
  ]) {
    const res = await request(strict.url, '/api/v1/alerts', {
      json: { stat_name: 's', condition_type: 'above', threshold: 1, channel: 'webhook', channel_config: { webhook_url: url } },
      bearer: key,
    })
    t.is(res.status, 400, url)
    t.is(res.body.code, 'webhook_refused')
    t.regex(res.body.detail, /not a public one; only public targets are allowed \(WEBHOOK_ALLOW_PRIVATE=1 lifts this/, url)
  }
  const [{ n }] = await app.sql`select count(*)::int as n from alerts where account_id = ${user.accountId}`
  t.is(n, 0)
})

test('item 6: every response says nosniff and no-store; those carrying a secret included; /docs has a strict CSP', async (t) => {
  const user = await signUp(app.url)
  const created = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'k' }, session: user.session })
  const key = created.body.key
  await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })
  const share = await request(app.url, '/api/v1/stats/s/share', { method: 'POST', bearer: key })
  const alert = await request(app.url, '/api/v1/alerts', {
    json: {
      stat_name: 's',
      condition_type: 'above',
      threshold: 1,
      channel: 'webhook',
      channel_config: { webhook_url: 'http://127.0.0.1:9/' },
    },
    bearer: key,
  })
  const login = await request(app.url, '/api/v1/auth/login', { json: { email: user.email, password: user.password } })
  for (const [what, res, status] of [
    ['new key', created, 201],
    ['share token', share, 201],
    ['signing secret', alert, 201],
    ['login', login, 200],
  ] as const) {
    t.is(res.status, status, what)
    t.is(res.headers.get('cache-control'), 'no-store', what)
    t.is(res.headers.get('x-content-type-options'), 'nosniff', what)
  }
  for (const path of ['/api/v1/health', '/api/v1/nothing', '/ez?stat=s', '/docs', '/api/v1/openapi.json']) {
    t.is((await request(app.url, path)).headers.get('x-content-type-options'), 'nosniff', path)
  }
  const blocked = await request(app.url, '/api/v1/health', { headers: { 'user-agent': 'Python-urllib/2.7' } })
  t.is(blocked.headers.get('x-content-type-options'), 'nosniff', 'the edge block too')

  // The reference runs only scripts served from our own origin (test/api/reference.test.ts checks the assets).
  const docs = await request(app.url, '/docs')
  const csp = docs.headers.get('content-security-policy') ?? ''
  t.regex(csp, /default-src 'none'/)
  t.regex(csp, /script-src 'self'(;|$)/)
  t.notRegex(csp, /unsafe-inline|unsafe-eval/)
  t.notRegex(docs.text, /<script>/, 'no inline script')
})

test('item 6: with PUBLIC_URL unset, a forged Host does not steer links; with it set, links use it; production requires it', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })
  const { request: httpRequest } = await import('node:http')
  const forged = await new Promise<{ body: string }>((resolve, reject) => {
    const u = new URL(`${app.url}/api/v1/stats/s/share`)
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { host: 'evil.example', authorization: `Bearer ${key}` },
      },
      (res) => {
        let body = ''
        res.on('data', (c) => (body += c)).on('end', () => resolve({ body }))
      },
    )
    req.on('error', reject)
    req.end()
  })
  const embedUrl: string = JSON.parse(forged.body).share.embed_url
  t.true(embedUrl.startsWith(`${app.url}/embed/`), embedUrl)
  t.false(embedUrl.includes('evil.example'))

  const pub = await app.another({ PUBLIC_URL: 'https://metrics.example/' })
  const share = await request(pub.url, '/api/v1/stats/s/share', {
    method: 'POST',
    bearer: key,
    headers: { 'x-forwarded-host': 'evil.example' },
  })
  t.true(share.body.share.embed_url.startsWith('https://metrics.example/embed/'), share.body.share.embed_url)

  const { loadConfig } = await import('../../shared/config.js')
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), { message: /PUBLIC_URL: required in production/ })
})

test('item 7: a body dripped slowly is cut after HTTP_REQUEST_TIMEOUT_MS, and health answers meanwhile', async (t) => {
  const slow = await app.another({ HTTP_REQUEST_TIMEOUT_MS: '1000' })
  const user = await signUp(slow.url)
  const { key } = await createKey(slow.url, user)
  const { connect } = await import('node:net')
  const u = new URL(slow.url)
  const socket = connect(Number(u.port), u.hostname)
  const started = Date.now()
  let received = ''
  socket.on('data', (c) => (received += c.toString()))
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)))
  socket.write(
    `POST /api/v1/stats/s/count HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{`,
  )
  const drip = setInterval(() => socket.writable && socket.write(' '), 100)
  const health = await request(slow.url, '/api/v1/health')
  t.is(health.status, 200, 'health stays fine while the slow body is open')
  const after = await closed
  clearInterval(drip)
  t.true(after < 4_000, `cut after ${after} ms`)
  t.regex(received, /^HTTP\/1\.1 408/)
  const [{ n }] = await app.sql`select count(*)::int as n from stats where account_id = ${user.accountId}`
  t.is(n, 0, 'nothing stored')
})

test('v1 writes, sign-up and login with a form, text or XML body get 415 saying the body must be JSON', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const cases: Array<[string, string, string]> = [
    ['/api/v1/stats/s/count', 'text/plain', '{"count":1}'],
    ['/api/v1/stats/s/value', 'application/x-www-form-urlencoded', 'value=1'],
    ['/api/v1/points', 'application/xml', '<points/>'],
    ['/api/v1/auth/signup', 'application/x-www-form-urlencoded', 'email=a%40b.co&password=correct+horse+battery'],
    ['/api/v1/auth/login', 'text/plain', '{"email":"a@b.co","password":"x"}'],
  ]
  for (const [path, type, body] of cases) {
    const res = await request(app.url, path, { body, headers: { 'content-type': type }, bearer: path.includes('/auth/') ? undefined : key })
    t.is(res.status, 415, `${path} ${type}`)
    t.is(res.body.code, 'unsupported_media_type')
    t.is(res.body.detail, `request body must be JSON: send it with Content-Type: application/json (got ${type})`)
  }
  // curl -d without -H sends a form type; a body with no type at all is refused the same way.
  const untyped = await fetch(`${app.url}/api/v1/stats/s/count`, {
    method: 'POST',
    body: new Blob(['{"count":1}']),
    headers: { authorization: `Bearer ${key}` },
  })
  t.is(untyped.status, 415)
  t.regex((await untyped.json()).detail, /got no Content-Type/)
  const [{ n }] = await app.sql`select count(*)::int as n from stats where account_id = ${user.accountId}`
  t.is(n, 0, 'nothing stored')
  const [{ a }] = await app.sql`select count(*)::int as a from accounts where email = 'a@b.co'`
  t.is(a, 0, 'no account')
  t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })).status, 200, 'JSON still works')
  t.is(
    (await request(app.url, '/api/v1/stats/s/share', { method: 'POST', bearer: key })).status,
    201,
    'a route without a body needs no type',
  )
})
