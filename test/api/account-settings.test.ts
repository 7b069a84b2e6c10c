// The account's time zone on real PostgreSQL and Redis through a listening server: set,
// read back, cleared, aliases stored under Intl's canonical name, a clear 400 for an unknown zone with
// nothing stored, one account's setting not touching another's, and the question box reading
// "yesterday" in the account's zone (or, with none set, the zone the page sends).
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const DAY = 86_400
const HOUR = 3_600

const app = appSuite({ workers: true })

const patch = (user: User, json: unknown) => request(app.url, '/api/v1/account', { method: 'PATCH', json, session: user.session })
const stored = async (accountId: string) =>
  (await app.sql<{ time_zone: string | null }[]>`select time_zone from accounts where id = ${accountId}`)[0].time_zone
const me = async (user: User) => (await request(app.url, '/api/v1/auth/me', { session: user.session })).body.account

test('29 time zone: unset at first, set, read back in /auth/me, cleared with null', async (t) => {
  const user = await signUp(app.url)
  t.is((await me(user)).time_zone, null)
  const res = await patch(user, { time_zone: 'Asia/Tokyo' })
  t.is(res.status, 200, res.text)
  t.like(res.body.account, { id: user.accountId, email: user.email, time_zone: 'Asia/Tokyo' })
  t.is(await stored(user.accountId), 'Asia/Tokyo')
  t.is((await me(user)).time_zone, 'Asia/Tokyo')
  t.is((await patch(user, { time_zone: null })).status, 200)
  t.is(await stored(user.accountId), null)
})

test('time zone: current names are kept, legacy names are accepted and stored under the current one', async (t) => {
  const user = await signUp(app.url)
  for (const [given, kept] of [
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['Asia/Calcutta', 'Asia/Kolkata'],
    ['Europe/Kiev', 'Europe/Kyiv'],
    ['Europe/Kyiv', 'Europe/Kyiv'],
    ['America/Godthab', 'America/Nuuk'],
  ]) {
    const res = await patch(user, { time_zone: given })
    t.is(res.status, 200, `${given}: ${res.text}`)
    t.is(res.body.account.time_zone, kept, given)
    t.is(await stored(user.accountId), kept, given)
  }
})

test('29 time zone: UTC and aliases Intl resolves are accepted, stored under the resolved name', async (t) => {
  const user = await signUp(app.url)
  for (const [given, kept] of [
    ['UTC', 'UTC'],
    ['Etc/UTC', new Intl.DateTimeFormat('en', { timeZone: 'Etc/UTC' }).resolvedOptions().timeZone],
    [' europe/paris ', 'Europe/Paris'],
  ]) {
    const res = await patch(user, { time_zone: given })
    t.is(res.status, 200, `${given}: ${res.text}`)
    t.is(res.body.account.time_zone, kept, given)
    t.is(await stored(user.accountId), kept, given)
  }
})

test('29 time zone rejections: 400 naming the problem, and nothing stored', async (t) => {
  const user = await signUp(app.url)
  t.is((await patch(user, { time_zone: 'America/New_York' })).status, 200)
  const cases: Array<[unknown, RegExp]> = [
    [
      { time_zone: 'Mars/Olympus_Mons' },
      /body\.time_zone: unknown time zone "Mars\/Olympus_Mons": must be an IANA time zone such as Europe\/Paris/,
    ],
    [{ time_zone: '+05:00' }, /body\.time_zone: unknown time zone/],
    [{ time_zone: '' }, /body\.time_zone: unknown time zone/],
    [{ time_zone: 'x'.repeat(65) }, /body\.time_zone: must be an IANA time zone/],
    [{ time_zone: 3 }, /body\.time_zone: /],
    [{}, /body\.time_zone: /],
    [{ time_zone: 'UTC', colour: 'red' }, /colour/],
  ]
  for (const [json, detail] of cases) {
    const res = await patch(user, json)
    t.is(res.status, 400, JSON.stringify(json))
    t.regex(res.body.detail, detail, JSON.stringify(json))
    t.is(await stored(user.accountId), 'America/New_York', `${JSON.stringify(json)} changed nothing`)
  }
  const unsigned = await request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'UTC' } })
  t.is(unsigned.status, 401)
  const noCsrf = await request(app.url, '/api/v1/account', {
    method: 'PATCH',
    json: { time_zone: 'UTC' },
    session: { cookie: user.session.cookie },
  })
  t.is(noCsrf.status, 403)
  t.is(await stored(user.accountId), 'America/New_York')
})

test("29 time zone: an account's setting is its own; a key sets it too", async (t) => {
  const a = await signUp(app.url)
  const b = await signUp(app.url)
  const { key } = await createKey(app.url, b)
  t.is((await patch(a, { time_zone: 'Asia/Tokyo' })).status, 200)
  const viaKey = await request(app.url, '/api/v1/account', { method: 'PATCH', json: { time_zone: 'Europe/Berlin' }, bearer: key })
  t.is(viaKey.status, 200, viaKey.text)
  t.is(await stored(a.accountId), 'Asia/Tokyo')
  t.is(await stored(b.accountId), 'Europe/Berlin')
})

test("29 the question box reads yesterday in the account's zone, else in the zone the page sends, else UTC", async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  // Kiritimati is UTC+14 all year: its yesterday is never the UTC one.
  const offset = 14 * HOUR
  const now = Math.floor(Date.now() / 1000)
  const kiriYesterday = Math.floor((now + offset) / DAY) * DAY - offset - DAY
  const utcYesterday = Math.floor(now / DAY) * DAY - DAY
  const points = [
    { stat: 'signups', count: 2, t: kiriYesterday + HOUR },
    { stat: 'signups', count: 3, t: kiriYesterday + 23 * HOUR },
    { stat: 'signups', count: 5, t: kiriYesterday - HOUR },
    // Kiritimati's today so far (it may have begun minutes ago).
    { stat: 'signups', count: 7, t: Math.min(now - 1, kiriYesterday + DAY + 60) },
  ]
  const sent = await request(app.url, '/ez', { json: { ezkey: key, data: points.map((p) => ({ ...p, t: String(p.t) })) } })
  t.is(sent.body.accepted, points.length, sent.text)
  await settle(app)
  const inWindow = (from: number, to: number) => points.filter((p) => p.t >= from && p.t < to).reduce((s, p) => s + p.count, 0)
  const ask = (body: object) =>
    request(app.url, '/api/v1/query', { json: { query: 'how many signups yesterday?', ...body }, session: user.session })

  const utc = await ask({})
  t.is(utc.body.intent.timezone, 'UTC')
  t.is(utc.body.intent.window.from, new Date(utcYesterday * 1000).toISOString())
  t.is(utc.body.data[0].value ?? 0, inWindow(utcYesterday, utcYesterday + DAY))

  const sentZone = await ask({ time_zone: 'Pacific/Kiritimati' })
  t.is(sentZone.status, 200, sentZone.text)
  t.is(sentZone.body.intent.timezone, 'Pacific/Kiritimati')
  t.is(sentZone.body.intent.window.from, new Date(kiriYesterday * 1000).toISOString())
  t.is(sentZone.body.intent.window.to, new Date((kiriYesterday + DAY) * 1000).toISOString())
  t.is(sentZone.body.data[0].value, inWindow(kiriYesterday, kiriYesterday + DAY))
  t.regex(sentZone.body.answer, /Pacific\/Kiritimati/, 'the answer says the zone')

  t.is((await patch(user, { time_zone: 'Pacific/Kiritimati' })).status, 200)
  const accountZone = await ask({ time_zone: 'UTC' })
  t.is(accountZone.body.intent.timezone, 'Pacific/Kiritimati', "the account's zone wins over the page's")
  t.is(accountZone.body.intent.window.from, new Date(kiriYesterday * 1000).toISOString())

  const bad = await ask({ time_zone: 'Nowhere/Land' })
  t.is(bad.status, 400)
  t.regex(bad.body.detail, /body\.time_zone: unknown time zone "Nowhere\/Land"/)
})
