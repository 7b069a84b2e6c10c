// One clock: an answer's buckets and times are the question's zone's, not UTC's. A
// breakdown by day cuts at the zone's midnights (the day clocks go back is 25 hours long), a peak hour
// is named on the zone's wall clock with the zone's name, and the same question in UTC cuts elsewhere.
// Answered at a fixed `now` through the engine (answerQuestion), over points written through /ez.
import test from 'ava'
import { answerQuestion } from '../../shared/query/engine.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })
let user: User

// Tuesday 2026-11-03 15:00 UTC (10:00 EST). New York left daylight time on Sunday Nov 1 at 02:00 EDT.
const NOW = new Date('2026-11-03T15:00:00Z')
const at = (iso: string) => Date.parse(iso) / 1000
const ORDERS: Array<[string, number]> = [
  ['2026-11-02T04:30:00Z', 1], // Sun Nov 1 23:30 EST; Mon Nov 2 in UTC
  ['2026-11-02T05:30:00Z', 2], // Mon Nov 2 00:30 EST
  ['2026-11-02T14:00:00Z', 4], // Mon Nov 2 09:00 EST
  ['2026-11-03T03:00:00Z', 8], // Mon Nov 2 22:00 EST; Tue Nov 3 in UTC
]

test.before(async () => {
  user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, '/ez', {
    json: { ezkey: key, data: ORDERS.map(([t, count]) => ({ stat: 'orders', count, t: String(at(t)) })) },
  })
  if (res.body.accepted !== ORDERS.length) throw new Error(res.text)
  await settle(app)
})

const ask = (query: string, zone: string) =>
  answerQuestion({ sql: app.sql, config: { queryLlm: undefined } }, user.accountId, { query, time_zone: zone }, NOW)
type Rec = { bucket_seconds?: number; t?: number; from?: string; to?: string; value: number }

test('29 by day in America/New_York: buckets start at its midnights, the 25-hour day whole, values by its calendar', async (t) => {
  const res = await ask('orders in the last 3 days by day', 'America/New_York')
  t.regex(res.verifier, /^passed/)
  const days = (res.data as Rec[]).filter((r) => r.bucket_seconds === 86_400)
  const byStart = Object.fromEntries(days.map((d) => [new Date(d.t! * 1000).toISOString(), d]))
  t.like(
    byStart['2026-11-01T04:00:00.000Z'],
    { value: 1, to: '2026-11-02T05:00:00.000Z' },
    'Nov 1 is 25 hours: EDT midnight to EST midnight',
  )
  t.like(byStart['2026-11-02T05:00:00.000Z'], { value: 14, from: '2026-11-02T05:00:00.000Z', to: '2026-11-03T05:00:00.000Z' })
  t.like(byStart['2026-11-03T05:00:00.000Z'], { value: 0 })
  t.true(res.answer.includes('2026-11-02 14'), res.answer)
  t.is(res.intent.timezone, 'America/New_York')
})

test('29 the same question in UTC cuts at UTC midnights', async (t) => {
  const res = await ask('orders in the last 3 days by day', 'UTC')
  const days = (res.data as Rec[]).filter((r) => r.bucket_seconds === 86_400)
  const byStart = Object.fromEntries(days.map((d) => [new Date(d.t! * 1000).toISOString(), d.value]))
  t.like(byStart, { '2026-11-02T00:00:00.000Z': 7, '2026-11-03T00:00:00.000Z': 8 })
})

test("29 a peak hour is named on the zone's wall clock, with the zone's name, and the verifier passes", async (t) => {
  const res = await ask('when did orders peak in the last 3 days', 'America/New_York')
  t.like(res.data[0], { value: 8, t: at('2026-11-03T03:00:00Z'), bucket_seconds: 3600 })
  t.true(res.answer.includes('2026-11-02 22:00 America/New_York'), res.answer)
  t.regex(res.verifier, /^passed: 1 of 1/)
  const utc = await ask('when did orders peak in the last 3 days', 'UTC')
  t.true(utc.answer.includes('2026-11-03 03:00 UTC'), utc.answer)
})

test('29 a zone whose name holds digits (Etc/GMT+5) is not read as a number by the verifier', async (t) => {
  const res = await ask('when did orders peak in the last 3 days', 'Etc/GMT+5')
  t.true(res.answer.includes('2026-11-02 22:00 Etc/GMT+5'), res.answer)
  t.regex(res.verifier, /^passed: 1 of 1/)
})
