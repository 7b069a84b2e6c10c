import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { cookieFrom, request } from '../helpers/http.js'

const app = appSuite()

test('signup creates an account, sets an HttpOnly session cookie and returns a CSRF token', async (t) => {
  const res = await request(app.url, '/api/v1/auth/signup', { json: { email: 'New.Person@Example.com', password: 'long enough password' } })
  t.is(res.status, 201)
  t.is(res.body.account.email, 'New.Person@Example.com')
  t.is(res.body.account.plan, 'free')
  t.regex(res.body.account.id, /^[0-9a-f-]{36}$/)
  t.truthy(res.body.csrf_token)
  const raw = res.headers.getSetCookie().find((c) => c.startsWith('service_session='))!
  t.regex(raw, /httponly/i)
  t.regex(raw, /samesite=lax/i)
  t.regex(raw, /path=\//i)
  // The cookie value is stored only as a hash.
  const token = cookieFrom(res, 'service_session')!.split('=')[1]
  const [row] = await app.sql`select count(*)::int as n from sessions where token_hash::text like ${`%${token}%`}`
  t.is(row.n, 0)
})

test('signup with a taken e-mail (any case) is 409 and creates nothing', async (t) => {
  const user = await signUp(app.url)
  const res = await request(app.url, '/api/v1/auth/signup', { json: { email: user.email.toUpperCase(), password: 'another password' } })
  t.is(res.status, 409)
  t.is(res.body.code, 'email_taken')
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  const [row] = await app.sql`select count(*)::int as n from accounts where lower(email) = lower(${user.email})`
  t.is(row.n, 1)
})

test('signup validation: short password and bad e-mail are 400 problems, nothing stored', async (t) => {
  const short = await request(app.url, '/api/v1/auth/signup', { json: { email: 'short@example.com', password: 'short' } })
  t.is(short.status, 400)
  t.is(short.body.code, 'validation_failed')
  t.regex(short.body.detail, /body\.password: must be at least 10 characters/)
  const bad = await request(app.url, '/api/v1/auth/signup', { json: { email: 'not-an-email', password: 'long enough password' } })
  t.is(bad.status, 400)
  t.regex(bad.body.detail, /body\.email/)
  const [row] = await app.sql`select count(*)::int as n from accounts where email in ('short@example.com', 'not-an-email')`
  t.is(row.n, 0)
})

test('passwords are stored with scrypt at N=2^15 by default, never in clear; a cheaper test cost still verifies both', async (t) => {
  // Test apps hash at a lower cost (test/helpers/app.ts): this process runs with the service's default.
  const real = await app.another({ PASSWORD_HASH_COST: undefined })
  t.is(real.config.passwordHashCost, 15)
  const user = await signUp(real.url)
  const [row] = await app.sql`select password_hash from accounts where id = ${user.accountId}`
  t.regex(row.password_hash, /^scrypt\$32768\$8\$1\$/)
  t.false(row.password_hash.includes(user.password))
  // A hash carries its own cost: each process signs in an account hashed at the other's.
  const cheap = await signUp(app.url)
  const [{ password_hash: cheapHash }] = await app.sql`select password_hash from accounts where id = ${cheap.accountId}`
  t.regex(cheapHash, /^scrypt\$1024\$8\$1\$/)
  t.is((await request(app.url, '/api/v1/auth/login', { json: { email: user.email, password: user.password } })).status, 200)
  t.is((await request(real.url, '/api/v1/auth/login', { json: { email: cheap.email, password: cheap.password } })).status, 200)
  t.is((await request(real.url, '/api/v1/auth/login', { json: { email: cheap.email, password: 'not the password' } })).status, 401)
})

test('login with the right password starts a new session; wrong password and unknown e-mail get one message', async (t) => {
  const user = await signUp(app.url)
  const ok = await request(app.url, '/api/v1/auth/login', { json: { email: user.email, password: user.password } })
  t.is(ok.status, 200)
  t.is(ok.body.account.id, user.accountId)
  t.not(cookieFrom(ok, 'service_session'), user.session.cookie)
  const wrong = await request(app.url, '/api/v1/auth/login', { json: { email: user.email, password: 'wrong password!' } })
  const unknown = await request(app.url, '/api/v1/auth/login', { json: { email: 'nobody@example.com', password: 'wrong password!' } })
  t.is(wrong.status, 401)
  t.is(unknown.status, 401)
  t.is(wrong.body.detail, 'wrong e-mail or password')
  t.is(unknown.body.detail, wrong.body.detail)
  t.is(wrong.headers.getSetCookie().length, 0)
})

test('GET /auth/me works with the session (with csrf_token) and with a Bearer key (without)', async (t) => {
  const user = await signUp(app.url)
  const viaSession = await request(app.url, '/api/v1/auth/me', { session: user.session })
  t.is(viaSession.status, 200)
  t.is(viaSession.body.account.id, user.accountId)
  t.is(viaSession.body.csrf_token, user.session.csrf)
  const { key } = await createKey(app.url, user)
  const viaKey = await request(app.url, '/api/v1/auth/me', { bearer: key })
  t.is(viaKey.status, 200)
  t.is(viaKey.body.account.email, user.email)
  t.is(viaKey.body.csrf_token, undefined)
})

test('missing, forged and malformed credentials are 401', async (t) => {
  const none = await request(app.url, '/api/v1/auth/me')
  t.is(none.status, 401)
  t.is(none.body.code, 'unauthorized')
  const forged = await request(app.url, '/api/v1/auth/me', { bearer: `mk_AAAAAAAAAAAA_${'B'.repeat(32)}` })
  t.is(forged.status, 401)
  const malformed = await request(app.url, '/api/v1/auth/me', { headers: { authorization: 'Basic Zm9vOmJhcg==' } })
  t.is(malformed.status, 401)
  const badCookie = await request(app.url, '/api/v1/auth/me', { session: { cookie: 'service_session=forged-token' } })
  t.is(badCookie.status, 401)
  t.is(badCookie.body.code, 'session_invalid')
})

test('a real key with one character changed is refused', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const last = key.at(-1) === 'a' ? 'b' : 'a'
  const res = await request(app.url, '/api/v1/auth/me', { bearer: key.slice(0, -1) + last })
  t.is(res.status, 401)
})

test('logout revokes the session server-side: the old cookie stops working', async (t) => {
  const user = await signUp(app.url)
  const out = await request(app.url, '/api/v1/auth/logout', { method: 'POST', session: user.session })
  t.is(out.status, 204)
  const after = await request(app.url, '/api/v1/auth/me', { session: user.session })
  t.is(after.status, 401)
  const [row] = await app.sql`select count(*)::int as n from sessions where account_id = ${user.accountId} and revoked_at is not null`
  t.is(row.n, 1)
})

test('an expired session is refused', async (t) => {
  const user = await signUp(app.url)
  await app.sql`update sessions set expires_at = now() - interval '1 second' where account_id = ${user.accountId}`
  const res = await request(app.url, '/api/v1/auth/me', { session: user.session })
  t.is(res.status, 401)
})

test('CSRF: a session-authenticated write without or with a wrong X-Service-CSRF is 403', async (t) => {
  const user = await signUp(app.url)
  const missing = await request(app.url, '/api/v1/auth/logout', { method: 'POST', session: { cookie: user.session.cookie } })
  t.is(missing.status, 403)
  t.is(missing.body.code, 'csrf_failed')
  const wrong = await request(app.url, '/api/v1/auth/logout', { method: 'POST', session: { cookie: user.session.cookie, csrf: 'nope' } })
  t.is(wrong.status, 403)
  // The session is still alive: the refused logout did nothing.
  t.is((await request(app.url, '/api/v1/auth/me', { session: user.session })).status, 200)
})

test('a Bearer key on a session-only route is 403', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, '/api/v1/auth/api-keys', { bearer: key })
  t.is(res.status, 403)
  t.is(res.body.code, 'session_required')
  const create = await request(app.url, '/api/v1/auth/api-keys', { bearer: key, json: { label: 'sneaky' } })
  t.is(create.status, 403)
  const [row] = await app.sql`select count(*)::int as n from api_keys where label = 'sneaky'`
  t.is(row.n, 0)
})

test('5.2 v1 routes do not read ukey or ezkey from the query string: adding them does not authenticate', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  for (const path of [
    `/api/v1/stats?ezkey=${key}`,
    `/api/v1/stats?ukey=${key}`,
    `/api/v1/auth/me?ezkey=${key}`,
    `/api/v1/export?ukey=${key}`,
  ]) {
    const res = await request(app.url, path)
    t.is(res.status, 401, path)
  }
  t.is((await request(app.url, '/api/v1/stats', { bearer: key })).status, 200)
})
