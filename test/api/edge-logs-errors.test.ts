import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite()

test('5.5 edge block: Python-urllib and libwww-perl User-Agents get 403 error code 1010 with no service body, on every route', async (t) => {
  for (const ua of ['Python-urllib/2.7', 'Python-urllib/3.11', 'libwww-perl/6.72']) {
    for (const path of ['/api/v1/health', '/api/v1/auth/me', '/no/such/route', '/ez?stat=x']) {
      const res = await request(app.url, path, { headers: { 'user-agent': ua } })
      t.is(res.status, 403, `${ua} ${path}`)
      t.is(res.text, 'error code: 1010')
      t.regex(res.headers.get('content-type') ?? '', /^text\/plain/)
    }
  }
})

test('5.5 edge block: any other User-Agent, or none, passes', async (t) => {
  for (const ua of ['python-requests/2.31', 'curl/8.0', 'Mozilla/5.0 Python-urllib/2.7', '']) {
    const res = await request(app.url, '/api/v1/health', { headers: ua ? { 'user-agent': ua } : {} })
    t.is(res.status, 200, ua)
  }
})

test('EDGE_BLOCKED_USER_AGENTS set to empty blocks nothing', async (t) => {
  const open = await app.another({ EDGE_BLOCKED_USER_AGENTS: '' })
  const res = await request(open.url, '/api/v1/health', { headers: { 'user-agent': 'Python-urllib/2.7' } })
  t.is(res.status, 200)
})

test('5.4 log hygiene: ezkey, ukey, email, Bearer keys and session cookies never reach the logs; other parameters are kept', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const secretQuery = 'ezkey=SECRETEZKEY123&ukey=SECRETUKEY456&email=secret%40example.com&stat=visible_stat'
  await request(app.url, `/api/v1/auth/me?${secretQuery}`, { bearer: key, headers: { referer: `https://example.org/page?${secretQuery}` } })
  await request(app.url, `/no/such/route?${secretQuery}`, { session: user.session })
  const cookieValue = user.session.cookie.split('=')[1]
  const all = app.logs.join('\n')
  for (const secret of ['SECRETEZKEY123', 'SECRETUKEY456', 'secret%40example.com', key, cookieValue])
    t.false(all.includes(secret), `leaked ${secret.slice(0, 12)}`)
  const line = app.logs.map((l) => JSON.parse(l)).find((l) => l.url?.startsWith('/api/v1/auth/me?'))
  t.truthy(line, 'the request was logged')
  t.true(line.url.includes('stat=visible_stat'), 'other query parameters are kept')
  t.true(line.referrer.includes('ezkey=[REDACTED]'))
})

test('unknown routes are a 404 problem; wrong methods a 405 problem', async (t) => {
  const missing = await request(app.url, '/api/v1/nothing-here')
  t.is(missing.status, 404)
  t.is(missing.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  t.like(missing.body, { status: 404, title: 'Not Found', code: 'route_not_found' })
  const wrong = await request(app.url, '/api/v1/health', { method: 'DELETE' })
  t.is(wrong.status, 405)
  t.is(wrong.body.code, 'method_not_allowed')
})

test('malformed JSON is a 400 problem, not a 500', async (t) => {
  const res = await request(app.url, '/api/v1/auth/signup', { body: '{"email": ', headers: { 'content-type': 'application/json' } })
  t.is(res.status, 400)
  t.is(res.body.code, 'malformed_body')
})

test('a body over 256 KiB is 413', async (t) => {
  const res = await request(app.url, '/api/v1/auth/login', { json: { email: 'a@b.co', password: 'x'.repeat(300 * 1024) } })
  t.is(res.status, 413)
  t.is(res.body.code, 'body_too_large')
})

test('the OpenAPI document lists every route with the schemas the routes validate with; /docs renders it', async (t) => {
  const res = await request(app.url, '/api/v1/openapi.json')
  t.is(res.status, 200)
  t.is(res.body.openapi, '3.1.0')
  for (const path of [
    '/api/v1/health',
    '/api/v1/auth/signup',
    '/api/v1/auth/login',
    '/api/v1/auth/logout',
    '/api/v1/auth/me',
    '/api/v1/auth/api-keys',
    '/api/v1/auth/api-keys/{id}',
  ]) {
    t.truthy(res.body.paths[path], path)
  }
  const label = res.body.components.schemas.CreateApiKeyBody.properties.label
  t.is(label.maxLength, 100)
  t.is(res.body.components.schemas.Credentials.properties.password.minLength, 10)
  const docs = await request(app.url, '/docs')
  t.is(docs.status, 200)
  t.regex(docs.text, /openapi\.json/)
})

test('every response carries a request id', async (t) => {
  const res = await request(app.url, '/api/v1/health')
  t.regex(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/)
})
