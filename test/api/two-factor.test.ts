// Two-factor sign-in through a listening server on real PostgreSQL and Redis: set-up,
// turning it on with a first code, sign-in requiring a code (each app code and each recovery code once),
// turning it off, the refusals, and the routes in the OpenAPI document.
import test from 'ava'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { generate } from 'otplib'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { cookieFrom, request } from '../helpers/http.js'

const app = appSuite()

/** The code the app would show `stepsAhead` time steps from now (one step of drift is accepted). */
const codeAt = (secret: string, stepsAhead = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + stepsAhead * 30 })

const login = (u: User, code?: string) =>
  request(app.url, '/api/v1/auth/login', { json: { email: u.email, password: u.password, ...(code !== undefined ? { code } : {}) } })
const post = (u: User, path: string, json?: unknown) => request(app.url, path, { method: 'POST', json, session: u.session })

async function enabled(u: User) {
  const setup = await post(u, '/api/v1/auth/2fa/setup')
  const res = await post(u, '/api/v1/auth/2fa/enable', { code: await codeAt(setup.body.secret) })
  if (res.status !== 200) throw new Error(`enable: ${res.status} ${res.text}`)
  return { secret: setup.body.secret as string, codes: res.body.recovery_codes as string[] }
}

test('2FA set-up: a secret and its otpauth URI; a wrong code leaves it off; the right code turns it on with ten one-time recovery codes, stored hashed', async (t) => {
  const u = await signUp(app.url)
  t.deepEqual((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body, {
    enabled: false,
    enabled_at: null,
    recovery_codes_left: 0,
    locked: false,
  })
  t.is((await post(u, '/api/v1/auth/2fa/enable', { code: '123456' })).body.code, 'two_factor_not_started')
  const setup = await post(u, '/api/v1/auth/2fa/setup')
  t.is(setup.status, 200, setup.text)
  t.regex(setup.body.secret, /^[A-Z2-7]{26,}$/)
  t.is(setup.body.otpauth_uri, `otpauth://totp/Metrics:${encodeURIComponent(u.email)}?secret=${setup.body.secret}&issuer=Metrics`)
  // Not on until a code proves the app holds the secret: sign-in still takes the password alone.
  t.is((await login(u)).status, 200)
  const good = await codeAt(setup.body.secret)
  const wrong = good === '000000' ? '111111' : '000000'
  const refused = await post(u, '/api/v1/auth/2fa/enable', { code: wrong })
  t.is(refused.status, 400)
  t.is(refused.body.code, 'two_factor_code_wrong')
  t.is((await post(u, '/api/v1/auth/2fa/enable', { code: 'abc' })).status, 400)
  t.false((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body.enabled)
  const res = await post(u, '/api/v1/auth/2fa/enable', { code: good })
  t.is(res.status, 200, res.text)
  const codes: string[] = res.body.recovery_codes
  t.is(codes.length, 10)
  t.is(new Set(codes).size, 10)
  for (const c of codes) t.regex(c, /^[a-z2-9]{5}-[a-z2-9]{5}$/)
  const status = (await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body
  t.like(status, { enabled: true, recovery_codes_left: 10 })
  const stored = await app.sql`select code_hash::text as h from recovery_codes where account_id = ${u.accountId}`
  t.is(stored.length, 10)
  t.false(
    stored.some((r) => codes.some((c) => r.h.includes(Buffer.from(c.replace('-', '')).toString('hex')))),
    'codes are stored hashed',
  )
  t.is((await post(u, '/api/v1/auth/2fa/setup')).status, 409, 'a second set-up while on is refused')
})

test('2FA sign-in: the password alone is 401 two_factor_required with no session; a wrong code 401; an app code works once; a recovery code works once', async (t) => {
  const u = await signUp(app.url)
  const { secret, codes } = await enabled(u)
  const bare = await login(u)
  t.is(bare.status, 401)
  t.is(bare.body.code, 'two_factor_required')
  t.is(cookieFrom(bare, 'service_session'), undefined)
  const before = (await app.sql`select count(*)::int as n from sessions where account_id = ${u.accountId}`)[0].n
  const next = await codeAt(secret, 1)
  const bad = await login(u, next === '000000' ? '111111' : '000000')
  t.is(bad.status, 401)
  t.is(bad.body.code, 'two_factor_invalid')
  // A wrong password with a right code is the plain wrong-password answer.
  t.is(
    (await request(app.url, '/api/v1/auth/login', { json: { email: u.email, password: 'not the password', code: next } })).body.code,
    'bad_credentials',
  )
  t.is((await app.sql`select count(*)::int as n from sessions where account_id = ${u.accountId}`)[0].n, before, 'no session from a refusal')

  const ok = await login(u, next)
  t.is(ok.status, 200, ok.text)
  const cookie = cookieFrom(ok, 'service_session')!
  t.is((await request(app.url, '/api/v1/auth/me', { session: { cookie } })).status, 200)
  t.is((await login(u, next)).body.code, 'two_factor_invalid', 'the same app code is not accepted twice')

  const recovery = codes[3]
  const viaRecovery = await login(u, recovery.toUpperCase().replace('-', ' '))
  t.is(viaRecovery.status, 200, 'a recovery code, however typed')
  const reused = await login(u, recovery)
  t.is(reused.status, 401)
  t.is(reused.body.code, 'two_factor_invalid')
  t.is((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body.recovery_codes_left, 9)
})

test('2FA off: needs the password and a code; refusals change nothing; afterwards the password alone signs in', async (t) => {
  const u = await signUp(app.url)
  const { secret, codes } = await enabled(u)
  const wrongPassword = await post(u, '/api/v1/auth/2fa/disable', { password: 'not the password', code: codes[0] })
  t.is(wrongPassword.status, 403)
  t.is(wrongPassword.body.code, 'wrong_password')
  const wrongCode = await post(u, '/api/v1/auth/2fa/disable', { password: u.password, code: 'aaaaa-aaaaa' })
  t.is(wrongCode.status, 403)
  t.is(wrongCode.body.code, 'wrong_second_factor')
  t.like((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body, { enabled: true, recovery_codes_left: 10 })
  t.is((await post(u, '/api/v1/auth/2fa/disable', { password: u.password, code: await codeAt(secret, 1) })).status, 204)
  t.deepEqual((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body, {
    enabled: false,
    enabled_at: null,
    recovery_codes_left: 0,
    locked: false,
  })
  t.is((await app.sql`select count(*)::int as n from recovery_codes where account_id = ${u.accountId}`)[0].n, 0)
  t.is((await login(u)).status, 200)
})

test('2FA recovery codes renewed: the old ones stop working, the new ones work once; a wrong code renews nothing', async (t) => {
  const u = await signUp(app.url)
  const { secret, codes } = await enabled(u)
  const refused = await post(u, '/api/v1/auth/2fa/recovery-codes', { code: 'aaaaa-aaaaa' })
  t.is(refused.status, 403)
  t.is(refused.body.code, 'wrong_second_factor')
  t.is((await login(u, codes[0])).status, 200, 'the old codes still work after a refusal')
  const res = await post(u, '/api/v1/auth/2fa/recovery-codes', { code: await codeAt(secret, 1) })
  t.is(res.status, 200, res.text)
  const fresh: string[] = res.body.recovery_codes
  t.is(fresh.length, 10)
  t.is((await login(u, codes[1])).body.code, 'two_factor_invalid', 'an old code no longer works')
  t.is((await login(u, fresh[0])).status, 200)
  t.is((await login(u, fresh[0])).status, 401)
  t.is((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body.recovery_codes_left, 9)
})

test('2FA lost app and codes: the operator command line turns it off and signs out every session', async (t) => {
  const u = await signUp(app.url)
  await enabled(u)
  t.is((await login(u)).body.code, 'two_factor_required')
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'shared/cli.ts', 'accounts:two-factor-off', '--email', u.email],
    {
      env: { ...process.env, DATABASE_URL: app.config.databaseUrl, LOG_LEVEL: 'error' },
    },
  )
  t.like(JSON.parse(stdout), { account: { id: u.accountId }, two_factor: false, sessions_revoked: 1 })
  t.is((await request(app.url, '/api/v1/auth/me', { session: u.session })).status, 401)
  t.is((await login(u)).status, 200)
  t.is((await app.sql`select count(*)::int as n from recovery_codes where account_id = ${u.accountId}`)[0].n, 0)
})

test('2FA routes take a session, not an API key, and a session write needs its CSRF token; they are in the OpenAPI document', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  t.is((await request(app.url, '/api/v1/auth/2fa', { bearer: key })).status, 403)
  t.is((await request(app.url, '/api/v1/auth/2fa/setup', { method: 'POST', bearer: key })).status, 403)
  t.is((await request(app.url, '/api/v1/auth/2fa/setup', { method: 'POST', session: { cookie: u.session.cookie } })).status, 403)
  t.is((await request(app.url, '/api/v1/auth/2fa')).status, 401)
  t.is((await app.sql`select totp_pending_secret from accounts where id = ${u.accountId}`)[0].totp_pending_secret, null)
  const doc = (await request(app.url, '/api/v1/openapi.json')).body
  for (const [path, method] of [
    ['/api/v1/auth/2fa', 'get'],
    ['/api/v1/auth/2fa/setup', 'post'],
    ['/api/v1/auth/2fa/enable', 'post'],
    ['/api/v1/auth/2fa/disable', 'post'],
    ['/api/v1/auth/2fa/recovery-codes', 'post'],
    ['/api/v1/auth/password-reset', 'post'],
    ['/api/v1/auth/password-reset/confirm', 'post'],
    ['/api/v1/auth/password', 'post'],
    ['/api/v1/account', 'delete'],
  ]) {
    t.truthy(doc.paths[path]?.[method], `${method} ${path} documented`)
  }
  t.truthy(doc.paths['/api/v1/auth/login'].post.requestBody.content['application/json'].schema)
  t.true(JSON.stringify(doc.components.schemas.LoginBody).includes('"code"'))
})
