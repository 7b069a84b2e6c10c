// Two-factor and reset hardening on real PostgreSQL and Redis through a listening server: turning two-factor on
// signs out every other session; a code is accepted once per time step and purpose (the code that turned it on
// also signs in, once); wrong codes lock the app's codes after TOTP_MAX_FAILURES until a recovery code or a
// password reset; password-reset mail to one address backs off to a day and stops at the day's cap.
import test from 'ava'
import { generate } from 'otplib'
import { throttlePasswordReset, RESET_MAILS_PER_DAY } from '../../shared/auth/throttle.js'
import { TOTP_MAX_FAILURES } from '../../shared/auth/two-factor.js'
import { AppError } from '../../shared/errors.js'
import { appSuite } from '../helpers/suite.js'
import { signUp, type User } from '../helpers/factories.js'
import { cookieFrom, request } from '../helpers/http.js'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js'

let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
})
// Sign-in's own throttle is generous here, so that what is measured is the two-factor lock.
const app = appSuite({ env: () => ({ SMTP_URL: smtp.url, AUTH_ATTEMPTS_PER_ADDRESS: '100', AUTH_ATTEMPTS_PER_CLIENT: '1000' }) })
test.serial.after.always(() => smtp?.close())

const codeAt = (secret: string, stepsAhead = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + stepsAhead * 30 })
const login = (u: User, code?: string) =>
  request(app.url, '/api/v1/auth/login', { json: { email: u.email, password: u.password, ...(code !== undefined ? { code } : {}) } })
const post = (session: User['session'], path: string, json?: unknown) => request(app.url, path, { method: 'POST', json, session })
const wrongFor = (code: string) => (code === '000000' ? '111111' : '000000')

async function enabled(u: User) {
  const setup = await post(u.session, '/api/v1/auth/2fa/setup')
  const code = await codeAt(setup.body.secret)
  const res = await post(u.session, '/api/v1/auth/2fa/enable', { code })
  if (res.status !== 200) throw new Error(`enable: ${res.status} ${res.text}`)
  return { secret: setup.body.secret as string, codes: res.body.recovery_codes as string[], code }
}

test('item 7: turning two-factor on signs out every other session (opened with the password alone); this one stays', async (t) => {
  const u = await signUp(app.url)
  const other = await login(u)
  const otherSession = { cookie: cookieFrom(other, 'service_session')!, csrf: other.body.csrf_token as string }
  t.is((await request(app.url, '/api/v1/auth/me', { session: otherSession })).status, 200)
  await enabled(u)
  t.is((await request(app.url, '/api/v1/auth/me', { session: otherSession })).status, 401, 'the other session is revoked')
  t.is((await request(app.url, '/api/v1/auth/me', { session: u.session })).status, 200, 'the session that turned it on stays')
  const [{ live }] = await app.sql`select count(*)::int as live from sessions where account_id = ${u.accountId} and revoked_at is null`
  t.is(live, 1)
})

test('item 18: the set-up answers a QR code (SVG data: URL) besides the key and link; the code that turned two-factor on signs in once in its step', async (t) => {
  const u = await signUp(app.url)
  const setup = await post(u.session, '/api/v1/auth/2fa/setup')
  t.is(setup.status, 200, setup.text)
  t.regex(setup.body.qr_code, /^data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+$/)
  const svg = Buffer.from(setup.body.qr_code.split(',')[1], 'base64').toString()
  t.regex(svg, /^<svg [^>]*viewBox="0 0 \d+ \d+"[^>]*>.*<path [^>]*d="M[^"]{200,}"/s)
  t.false(svg.includes('<script'), 'an image, nothing that runs')
  t.truthy(setup.body.secret)
  t.true(setup.body.otpauth_uri.startsWith('otpauth://totp/'))
  const code = await codeAt(setup.body.secret)
  t.is((await post(u.session, '/api/v1/auth/2fa/enable', { code })).status, 200)
  // The same code, within its step: turning it on was one purpose, signing in is another.
  const first = await login(u, code)
  t.is(first.status, 200, first.text)
  const again = await login(u, code)
  t.is(again.status, 401, 'but it signs in only once')
  t.is(again.body.code, 'two_factor_invalid')
  // A code used to sign in still serves once to manage the codes, and not twice.
  const next = await codeAt(setup.body.secret, 1)
  t.is((await login(u, next)).status, 200)
  t.is((await post(u.session, '/api/v1/auth/2fa/recovery-codes', { code: next })).status, 200)
  t.is((await post(u.session, '/api/v1/auth/2fa/recovery-codes', { code: next })).body.code, 'wrong_second_factor')
})

test('item 6: wrong codes lock the app codes at the limit (nothing more guessed, the right code refused too); a recovery code lifts the lock', async (t) => {
  const u = await signUp(app.url)
  const { secret, codes } = await enabled(u)
  const wrong = wrongFor(await codeAt(secret, 1))
  const answers: string[] = []
  for (let i = 0; i < TOTP_MAX_FAILURES + 2; i++) answers.push((await login(u, wrong)).body.code)
  t.deepEqual(answers, [
    ...Array(TOTP_MAX_FAILURES - 1).fill('two_factor_invalid'),
    'two_factor_locked',
    'two_factor_locked',
    'two_factor_locked',
  ])
  const locked = await login(u, await codeAt(secret, 1))
  t.is(locked.status, 403, 'the right app code is refused while locked')
  t.is(locked.body.code, 'two_factor_locked')
  t.is(
    locked.body.detail,
    `two-factor sign-in is locked after ${TOTP_MAX_FAILURES} wrong codes: use one of your recovery codes instead, or reset the password by mail (either lifts the lock); nothing was changed`,
  )
  t.is(cookieFrom(locked, 'service_session'), undefined)
  t.like((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body, { enabled: true, locked: true })
  // The account's own management is locked for app codes too: no guessing through another route.
  t.is((await post(u.session, '/api/v1/auth/2fa/recovery-codes', { code: await codeAt(secret, 1) })).body.code, 'two_factor_locked')
  const viaRecovery = await login(u, codes[0])
  t.is(viaRecovery.status, 200, viaRecovery.text)
  t.like((await request(app.url, '/api/v1/auth/2fa', { session: u.session })).body, { locked: false })
  t.is((await login(u, await codeAt(secret, 1))).status, 200, 'the app codes work again')
  const [row] = await app.sql`select totp_failures, totp_locked_at from accounts where id = ${u.accountId}`
  t.like(row, { totp_failures: 0, totp_locked_at: null })
})

test('item 6: a password reset lifts the two-factor lock', async (t) => {
  const u = await signUp(app.url)
  const { secret } = await enabled(u)
  const wrong = wrongFor(await codeAt(secret, 1))
  for (let i = 0; i < TOTP_MAX_FAILURES; i++) await login(u, wrong)
  t.is((await login(u, await codeAt(secret, 1))).body.code, 'two_factor_locked')
  t.is((await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email } })).status, 202)
  const [mail] = await smtp.waitFor(1, (m) => m.to.includes(u.email))
  const token = /\/reset\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]
  const password = 'a new passphrase after the lock'
  t.is((await request(app.url, '/api/v1/auth/password-reset/confirm', { json: { token, password } })).status, 200)
  const res = await request(app.url, '/api/v1/auth/login', { json: { email: u.email, password, code: await codeAt(secret, 1) } })
  t.is(res.status, 200, res.text)
})

test('item 6: reset mail to one address: the delay doubles past a minute up to a day, the day cap holds', async (t) => {
  const redis = app.api.deps.redis
  const config = { ...app.config, authAttemptsPerAddress: 1, authAttemptsPerClient: 1000 }
  const email = `backoff.${Date.now()}@example.com`
  let now = Date.now()
  const tryAt = async (at: number): Promise<number> => {
    try {
      await throttlePasswordReset(redis, config, '198.51.100.1', email, at)
      return 0
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'too_many_attempts') throw err
      return err.retryAfter!
    }
  }
  // One free request; every later one waits, each wait twice the last: 1 s, 2 s, 4 s, ... (the clock is moved
  // past each wait instead of sleeping through it).
  const waits: number[] = []
  let accepted = 0
  for (let i = 0; i < 40 && accepted < RESET_MAILS_PER_DAY; i++) {
    const wait = await tryAt(now)
    if (wait === 0) accepted++
    else {
      waits.push(wait)
      now += wait * 1000
    }
  }
  t.is(accepted, RESET_MAILS_PER_DAY)
  t.deepEqual(waits, [1, 2, 4])
  // The cap: the next waits for the day to end (from the first request), however long the delay alone was.
  const capped = await tryAt(now)
  t.true(capped > 86_000 && capped <= 86_400, `capped for ${capped} s`)
  t.not(await tryAt(now + 3_600_000), 0, 'an hour later still refused')
  // The delay keeps growing across days (16 s, then 32 s ...) and reaches far past a minute, up to a day.
  now += capped * 1000
  t.is(await tryAt(now), 0)
  const next = await tryAt(now)
  t.true(next >= 16, `after the cap the delay has grown on (${next} s)`)
  let wait = next
  for (let i = 0; i < 20; i++) {
    now += wait * 1000
    if ((await tryAt(now)) !== 0) break
    wait = await tryAt(now)
    if (wait === 0) break
  }
  t.true(wait > 60, `the delay passes a minute (${wait} s), where sign-in's stops`)
  t.true(wait <= 86_400, `and never exceeds a day (${wait} s)`)
})

test('item 6: over HTTP, with free requests above the cap, only RESET_MAILS_PER_DAY mails go to one address; the rest are 429', async (t) => {
  const u = await signUp(app.url)
  const statuses: number[] = []
  for (let i = 0; i < RESET_MAILS_PER_DAY + 4; i++)
    statuses.push((await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email } })).status)
  t.deepEqual(statuses, [...Array(RESET_MAILS_PER_DAY).fill(202), 429, 429, 429, 429])
  const limited = await request(app.url, '/api/v1/auth/password-reset', { json: { email: u.email.toUpperCase() } })
  t.is(limited.status, 429)
  t.is(limited.body.code, 'too_many_attempts')
  t.regex(limited.body.detail, /^too many password reset attempts; retry in 2\d h \(\d+ s\)$/)
  await smtp.waitFor(RESET_MAILS_PER_DAY, (m) => m.to.includes(u.email))
  await new Promise((r) => setTimeout(r, 500))
  t.is(smtp.mails.filter((m) => m.to.includes(u.email)).length, RESET_MAILS_PER_DAY, 'nothing mailed beyond the cap')
})
