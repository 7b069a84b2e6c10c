// Issue 10 item 4: what was a 500 and is the client's error is a 400 with a message.
import test from 'ava'
import { gzipSync } from 'node:zlib'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

let app: TestApp
test.before(async () => { app = await startTestApp() })
test.after.always(() => app?.close())

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
  t.false(app.logs.some((l) => l.includes('unhandled error')), 'no 500 was logged')
})

test('item 4: a Content-Encoding header on a body that is not compressed that way is a 400; a real gzip body works', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const res = await request(app.url, '/api/v1/stats/s/count', { body: '{"count":1}', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, bearer: key })
    t.is(res.status, 400, encoding)
    t.is(res.body.code, 'malformed_body')
    t.regex(res.body.detail, /^request body could not be decompressed as its Content-Encoding says/)
  }
  const [{ n }] = await app.sql`select count(*)::int as n from stats where account_id = ${user.accountId}`
  t.is(n, 0, 'nothing stored')
  const res = await fetch(`${app.url}/api/v1/stats/s/count`, {
    method: 'POST', body: gzipSync('{"count":1}'), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${key}` },
  })
  t.is(res.status, 200)
  t.false(app.logs.some((l) => l.includes('unhandled error')), 'no 500 was logged')
})
