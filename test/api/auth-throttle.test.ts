// Sign-in throttled per address and per client address, sign-up per client address,
// shared across API processes through Redis: 429 with Retry-After, and a short, growing delay only.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite({ env: { AUTH_ATTEMPTS_PER_ADDRESS: '5', AUTH_ATTEMPTS_PER_CLIENT: '30' } })

const login = (url: string, email: string, password: string, ip?: string) =>
  request(url, '/api/v1/auth/login', { json: { email, password }, headers: ip ? { 'x-forwarded-for': ip } : {} })

test.serial(
  '60 parallel wrong passwords for one address, across two API processes: a few 401s, the rest 429 with Retry-After',
  async (t) => {
    const user = await signUp(app.url)
    const other = await app.another({ AUTH_ATTEMPTS_PER_ADDRESS: '5', AUTH_ATTEMPTS_PER_CLIENT: '30' })
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) => login(i % 2 ? other.url : app.url, user.email, 'wrong password!')),
    )
    const statuses = replies.map((r) => r.status)
    // 5 free attempts and one that starts the delay; on a slow machine the 60 take seconds, so a few
    // more may pass as the first delays (1 s, 2 s, 4 s) run out.
    const refused = statuses.filter((s) => s === 401).length
    t.true(refused >= 6 && refused <= 12, `${refused} answers of 401`)
    t.is(statuses.filter((s) => s === 429).length, 60 - refused)
    const limited = replies.find((r) => r.status === 429)!
    t.is(limited.body.code, 'too_many_attempts')
    t.regex(limited.body.detail, /^too many sign-in attempts; retry in \d+ s$/)
    t.true(Number(limited.headers.get('retry-after')) >= 1)
    // The delay is short (1 s, doubling, at most a minute): once it has passed the real user signs in.
    const wait = Math.max(...replies.filter((r) => r.status === 429).map((r) => Number(r.headers.get('retry-after'))))
    t.true(wait <= 60, `Retry-After ${wait} s`)
    await new Promise((r) => setTimeout(r, wait * 1000 + 50))
    const ok = await login(app.url, user.email, user.password)
    t.is(ok.status, 200, 'after the short delay the real user signs in')
    // A success starts the address afresh: the next typo is a plain 401.
    t.is((await login(app.url, user.email, 'wrong password!')).status, 401)
    t.is((await login(app.url, user.email, user.password)).status, 200)
  },
)

test.serial('per client address: spraying many accounts from one client is throttled; sign-up per client too', async (t) => {
  const sprayer = await app.another({ AUTH_ATTEMPTS_PER_ADDRESS: '5', AUTH_ATTEMPTS_PER_CLIENT: '3', TRUST_PROXY: '1' })
  const ip = '203.0.113.7'
  // In parallel, so that all six reach the throttle within its first 1 s delay however slow the machine is.
  const statuses = (
    await Promise.all(Array.from({ length: 6 }, (_, i) => login(sprayer.url, `nobody${i}@example.com`, 'guess guess guess', ip)))
  ).map((r) => r.status)
  t.deepEqual(statuses.sort(), [401, 401, 401, 401, 429, 429])
  t.is((await login(sprayer.url, 'nobody9@example.com', 'guess guess guess', '203.0.113.8')).status, 401, 'another client is not affected')

  const signups = (
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        request(sprayer.url, '/api/v1/auth/signup', {
          json: { email: `bulk${i}.${Date.now()}@example.com`, password: 'correct horse battery' },
          headers: { 'x-forwarded-for': '203.0.113.9' },
        }),
      ),
    )
  ).map((r) => r.status)
  t.deepEqual(signups.sort(), [201, 201, 201, 201, 429, 429])
  const [{ n }] = await app.sql`select count(*)::int as n from accounts where email like 'bulk%'`
  t.is(n, 4, 'a refused sign-up creates no account')
})
