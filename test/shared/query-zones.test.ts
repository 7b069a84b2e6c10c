// The question box's periods in the account's time zone: calendar periods start at the
// zone's midnights (a day around a DST change is 23 or 25 hours), weeks at its Mondays, rolling windows
// keep their real length, and the label names the zone. UTC is checked beside each for contrast.
import test from 'ava'
import { parseIntent } from '../../shared/query/intent.js'
import { findPeriods } from '../../shared/query/periods.js'

const HOUR = 3_600_000
const one = (q: string, now: string, zone: string) => {
  const [p] = findPeriods(q, new Date(now), zone)
  return { from: p.from.toISOString(), to: p.to.toISOString(), label: p.label, previous: p.previous() }
}
const hours = (p: { from: string; to: string }) => (Date.parse(p.to) - Date.parse(p.from)) / HOUR

test('29 yesterday in Asia/Tokyo just after its midnight is already the UTC day that is still running', (t) => {
  // 16:30 UTC on the 25th is 01:30 on the 26th in Tokyo (UTC+9, no DST).
  const tokyo = one('yesterday', '2026-11-25T16:30:00Z', 'Asia/Tokyo')
  t.like(tokyo, { from: '2026-11-24T15:00:00.000Z', to: '2026-11-25T15:00:00.000Z', label: 'yesterday (2026-11-25 Asia/Tokyo)' })
  t.is(tokyo.previous.from.toISOString(), '2026-11-23T15:00:00.000Z')
  t.like(one('yesterday', '2026-11-25T16:30:00Z', 'UTC'), { from: '2026-11-24T00:00:00.000Z', label: 'yesterday (2026-11-24 UTC)' })
})

test('29 yesterday in America/New_York: before its midnight it is two UTC days back; the day clocks go back is 25 hours', (t) => {
  // 03:30 UTC on Nov 2 is still Nov 1 (22:30 EST) in New York.
  t.like(one('yesterday', '2026-11-02T03:30:00Z', 'America/New_York'), {
    from: '2026-10-31T04:00:00.000Z',
    to: '2026-11-01T04:00:00.000Z',
    label: 'yesterday (2026-10-31 America/New_York)',
  })
  // Nov 1 2026: EDT (UTC-4) until 02:00, then EST (UTC-5).
  const fallBack = one('yesterday', '2026-11-02T12:00:00Z', 'America/New_York')
  t.like(fallBack, { from: '2026-11-01T04:00:00.000Z', to: '2026-11-02T05:00:00.000Z', label: 'yesterday (2026-11-01 America/New_York)' })
  t.is(hours(fallBack), 25)
  // Mar 8 2026: clocks go forward, a 23-hour day.
  const springForward = one('yesterday', '2026-03-09T12:00:00Z', 'America/New_York')
  t.like(springForward, { from: '2026-03-08T05:00:00.000Z', to: '2026-03-09T04:00:00.000Z' })
  t.is(hours(springForward), 23)
})

test('29 today in the repeated hour of a fall-back night runs to now, from the local midnight', (t) => {
  // 05:30 UTC is 01:30 EDT, the first of the two 01:30s of Nov 1 in New York.
  const today = one('today', '2026-11-01T05:30:00Z', 'America/New_York')
  t.like(today, { from: '2026-11-01T04:00:00.000Z', to: '2026-11-01T05:30:00.000Z', label: 'today (2026-11-01 America/New_York, so far)' })
  t.is(today.previous.to.toISOString(), '2026-10-31T05:30:00.000Z', 'yesterday up to the same wall-clock time')
})

test('29 a day that starts in a DST gap (Santiago jumps from 00:00 to 01:00) starts at the jump', (t) => {
  const p = one('yesterday', '2026-09-07T16:00:00Z', 'America/Santiago')
  t.like(p, { from: '2026-09-06T04:00:00.000Z', to: '2026-09-07T03:00:00.000Z', label: 'yesterday (2026-09-06 America/Santiago)' })
  t.is(hours(p), 23)
})

test('29 this week and last Monday in Asia/Tokyo when it is already Monday there and still Sunday in UTC', (t) => {
  // Sunday 2026-11-22 20:00 UTC is Monday 2026-11-23 05:00 in Tokyo.
  t.like(one('this week', '2026-11-22T20:00:00Z', 'Asia/Tokyo'), {
    from: '2026-11-22T15:00:00.000Z',
    to: '2026-11-22T20:00:00.000Z',
    label: 'this week (since 2026-11-23 Asia/Tokyo, so far)',
  })
  t.like(one('this week', '2026-11-22T20:00:00Z', 'UTC'), { from: '2026-11-16T00:00:00.000Z' })
  t.like(one('last monday', '2026-11-22T20:00:00Z', 'Asia/Tokyo'), {
    from: '2026-11-15T15:00:00.000Z',
    to: '2026-11-16T15:00:00.000Z',
    label: 'on 2026-11-16 (Asia/Tokyo)',
  })
  t.like(one('last monday', '2026-11-22T20:00:00Z', 'UTC'), { from: '2026-11-16T00:00:00.000Z', to: '2026-11-17T00:00:00.000Z' })
})

test('29 rolling windows keep their real length across a DST change', (t) => {
  // 08:00 UTC on Nov 1 is 03:00 EST; six real hours back is 22:00 EDT the day before.
  const six = one('last 6 hours', '2026-11-01T08:00:00Z', 'America/New_York')
  t.like(six, { from: '2026-11-01T02:00:00.000Z', to: '2026-11-01T08:00:00.000Z', label: 'in the last 6 hours' })
  t.is(six.previous.from.toISOString(), '2026-10-31T20:00:00.000Z')
})

test("29 the parsed intent carries the zone's periods, a compare of this week against the same stretch of last week", (t) => {
  const i = parseIntent(
    'signups this week vs last week',
    [{ id: '1', name: 'signups', kind: 'counter' }],
    new Date('2026-11-25T15:42:00Z'),
    'Europe/Paris',
  )
  t.is(i.op, 'compare')
  t.is(i.window?.from.toISOString(), '2026-11-22T23:00:00.000Z', 'Monday 00:00 CET')
  t.is(i.compareTo?.from.toISOString(), '2026-11-15T23:00:00.000Z')
  t.regex(i.window?.label ?? '', /Europe\/Paris/)
})
