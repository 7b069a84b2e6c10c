import test from 'ava'
import { conditionHolds, step, type AlertState, type Rule } from '../../shared/alerts/conditions.js'

const rule = (over: Partial<Rule> = {}): Rule => ({
  condition: 'above',
  threshold: 10,
  windowMinutes: 5,
  direction: 'above',
  cooldownMinutes: 0,
  ...over,
})
const ok: AlertState = { state: 'ok', incidentId: null, incidentNotified: false, lastNotifiedAt: null, conditionSince: null }
const at = (s: number) => new Date(1_700_000_000_000 + s * 1000)

test('2.4 above fires when value > threshold; exactly at the threshold never holds', (t) => {
  t.true(conditionHolds(rule(), { value: 10.001, previous: null }))
  t.false(conditionHolds(rule(), { value: 10, previous: null }))
  t.false(conditionHolds(rule(), { value: 9, previous: null }))
  t.is(conditionHolds(rule(), { value: null, previous: null }), null, 'no data: cannot tell')
})

test('2.4 below fires when value < threshold; exactly at the threshold never holds', (t) => {
  const r = rule({ condition: 'below' })
  t.true(conditionHolds(r, { value: 9.99, previous: null }))
  t.false(conditionHolds(r, { value: 10, previous: null }))
})

test('2.4 pct_change: the trend must pass the percentage (positive: rise, negative: fall); from zero cannot tell', (t) => {
  const up = rule({ condition: 'pct_change', threshold: 50 })
  t.true(conditionHolds(up, { value: 151, previous: 100 }))
  t.false(conditionHolds(up, { value: 150, previous: 100 }), 'exactly 50% is not past it')
  const down = rule({ condition: 'pct_change', threshold: -50 })
  t.true(conditionHolds(down, { value: 49, previous: 100 }))
  t.false(conditionHolds(down, { value: 50, previous: 100 }))
  t.is(conditionHolds(up, { value: 5, previous: 0 }), null)
  t.is(conditionHolds(up, { value: 5, previous: null }), null)
})

test('2.4 heartbeat and missing_data: staleness must exceed the window', (t) => {
  for (const condition of ['heartbeat', 'missing_data'] as const) {
    const r = rule({ condition, windowMinutes: 5 })
    t.true(conditionHolds(r, { value: 301, previous: null }))
    t.false(conditionHolds(r, { value: 300, previous: null }))
  }
})

test('3.2 fire on the transition into breach only; while firing nothing new; recovery resolves the same incident', (t) => {
  const r = rule()
  const fired = step(r, ok, true, at(0))
  t.is(fired.event, 'fired')
  t.is(fired.next.state, 'firing')
  t.truthy(fired.next.incidentId)
  const still = step(r, fired.next, true, at(15))
  t.is(still.event, undefined)
  t.is(still.next.incidentId, fired.next.incidentId)
  const resolved = step(r, still.next, false, at(30))
  t.is(resolved.event, 'resolved')
  t.is(resolved.next.state, 'ok')
  const again = step(r, resolved.next, true, at(45))
  t.not(again.next.incidentId, fired.next.incidentId, 'a new breach is a new incident')
})

test('3.2 no data leaves the alert as it is', (t) => {
  const firing = step(rule(), ok, true, at(0)).next
  t.deepEqual(step(rule(), firing, null, at(15)), { next: firing })
  t.deepEqual(step(rule(), ok, null, at(15)), { next: ok })
})

test('3.2 cooldown suppresses a repeat fire, and that breach recovers silently; it never withholds a resolve', (t) => {
  const r = rule({ cooldownMinutes: 10 })
  const first = step(r, ok, true, at(0))
  const resolved = step(r, first.next, false, at(60))
  t.is(resolved.event, 'resolved', 'the cooldown does not hold back the resolve')
  const suppressed = step(r, resolved.next, true, at(120))
  t.is(suppressed.event, undefined)
  t.is(suppressed.next.state, 'firing')
  t.false(suppressed.next.incidentNotified)
  const silent = step(r, suppressed.next, false, at(180))
  t.is(silent.event, undefined)
  t.is(silent.next.state, 'ok')
  const later = step(r, silent.next, true, at(601))
  t.is(later.event, 'fired', 'after the cooldown a fire is sent again')
})

test('sustained: fires once the condition has held for the whole window; a break restarts the clock; direction below flips it', (t) => {
  const r = rule({ condition: 'sustained', windowMinutes: 2 })
  const s1 = step(r, ok, conditionHolds(r, { value: 11, previous: null }), at(0))
  t.is(s1.event, undefined)
  const s2 = step(r, s1.next, true, at(60))
  t.is(s2.event, undefined)
  const broken = step(r, s2.next, conditionHolds(r, { value: 10, previous: null }), at(90))
  t.is(broken.next.conditionSince, null)
  const s3 = step(r, broken.next, true, at(100))
  const s4 = step(r, s3.next, true, at(219))
  t.is(s4.event, undefined, '119 s is not the whole window')
  const s5 = step(r, s4.next, true, at(220))
  t.is(s5.event, 'fired')
  const below = rule({ condition: 'sustained', direction: 'below' })
  t.true(conditionHolds(below, { value: 9, previous: null }))
  t.false(conditionHolds(below, { value: 11, previous: null }))
})
