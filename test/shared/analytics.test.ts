// The analytics arithmetic on series small enough to check by hand: the
// threshold back-test (through the alert state machine), the suggestions
// around it, and the correlation with its lag search and exclusions.
import test from 'ava'
import { sampleRankCorrelation } from 'simple-statistics'
import type { Rule } from '../../shared/alerts/conditions.js'
import { bestLag, diff, MIN_PAIRS } from '../../shared/analytics/correlations.js'
import { backtest, stepInside, suggestThresholds, twoSignificant, type MinuteSeries } from '../../shared/analytics/thresholds.js'

const FROM = 1_700_000_040 // a whole minute
const series = (values: Array<number | null>): MinuteSeries => ({ from: FROM, values })
const rule = (over: Partial<Rule> = {}): Rule => ({
  condition: 'above',
  threshold: 3,
  windowMinutes: 1,
  direction: 'above',
  cooldownMinutes: 0,
  ...over,
})
/** The evaluation at the end of minute i. */
const endOf = (i: number) => new Date((FROM + (i + 1) * 60) * 1000)

test('back-test: two separate breaches give two fires; minutes in breach counted; each incident from its first to its recovering evaluation', (t) => {
  const b = backtest(rule(), series([1, 1, 5, 6, 1, 1, 1, 5, 1]))
  t.is(b.fired, 2)
  t.is(b.suppressed, 0)
  t.is(b.minutesInBreach, 3)
  t.deepEqual(b.incidents, [
    { startedAt: endOf(2), endedAt: endOf(4), notified: true, peak: 6 },
    { startedAt: endOf(7), endedAt: endOf(8), notified: true, peak: 5 },
  ])
})

test('back-test: a cooldown longer than the gap between two breaches gives one fire and one suppressed', (t) => {
  // Fires at the end of minute 2; the next breach starts at the end of minute 7, 5 minutes later.
  const values = [1, 1, 5, 6, 1, 1, 1, 5, 1]
  const long = backtest(rule({ cooldownMinutes: 6 }), series(values))
  t.deepEqual([long.fired, long.suppressed, long.minutesInBreach], [1, 1, 3])
  t.false(long.incidents[1].notified)
  const exact = backtest(rule({ cooldownMinutes: 5 }), series(values))
  t.deepEqual([exact.fired, exact.suppressed], [2, 0], 'a cooldown of exactly the gap has passed')
})

test('back-test: exactly at the threshold is not a breach; minutes without a value leave the state as it is', (t) => {
  t.is(backtest(rule(), series([3, 3, 3])).fired, 0)
  const b = backtest(rule(), series([5, null, null, 5, 1, null]))
  t.deepEqual([b.fired, b.minutesInBreach], [1, 2])
  t.deepEqual(b.incidents, [{ startedAt: endOf(0), endedAt: endOf(4), notified: true, peak: 5 }])
})

test('back-test: below fires under the threshold; the peak is the lowest value; an open incident has no end', (t) => {
  const b = backtest(rule({ condition: 'below', direction: 'below', threshold: 2 }), series([4, 1, 0.5, 3, 1, 0]))
  t.is(b.fired, 2)
  t.is(b.minutesInBreach, 4)
  t.deepEqual(
    b.incidents.map((i) => [i.peak, i.endedAt]),
    [
      [0.5, endOf(3)],
      [0, null],
    ],
  )
})

test('twoSignificant rounds to two significant figures', (t) => {
  t.deepEqual([1234, 0.012345, 99.5, -456, 0, 7].map(twoSignificant), [1200, 0.012, 100, -460, 0, 7])
})

const stat = (createdAt: Date) => ({ name: 'latency', kind: 'gauge' as const, createdAt })
const longAgo = new Date(0)

test('suggestions: quantiles of the minute values rounded to two significant figures, duplicates dropped, each back-tested', (t) => {
  // 1,000 minutes: 1..1000 in order, so the quantiles are known (interpolating, like R type 7).
  const values = Array.from({ length: 1000 }, (_, i) => i + 1)
  const r = suggestThresholds({
    stat: stat(longAgo),
    series: series(values),
    condition: 'above',
    cooldownMinutes: 0,
    lookbackDays: 30,
    clampedToDays: null,
  })
  t.like(r.distribution, { min: 1, p50: 500.5, max: 1000 })
  // 999.001 and 1000 round to the maximum, which `above` never fires on: one step inside it is 990, already there.
  t.deepEqual(
    r.suggestions.map((s) => [s.threshold, s.quantile]),
    [
      [950, 0.95],
      [990, 0.99],
    ],
  )
  // A rising series breaches once and stays in breach: one fire, and every minute above counts.
  t.deepEqual(
    r.suggestions.map((s) => [s.would_have_fired, s.minutes_in_breach, s.catches_largest]),
    [
      [1, 50, 3],
      [1, 10, 3],
    ],
  )
  t.deepEqual(
    r.largest_minutes.map((m) => m.value),
    [1000, 999, 998],
  )
  t.is(r.basis.evaluations, 1000)
  t.true(r.warnings.some((w) => /only 0.7 days of data/.test(w)))
})

test('suggestions: each of the largest minutes is named by the minute it covers, not the evaluation at its end', (t) => {
  // Minute 3 ([FROM + 180 s, FROM + 240 s)) holds the largest value: a point at FROM + 210 s lies in it.
  const r = suggestThresholds({
    stat: stat(longAgo),
    series: series([1, 2, 1, 9, 1]),
    condition: 'above',
    cooldownMinutes: 0,
    lookbackDays: 30,
    clampedToDays: null,
  })
  t.is(r.largest_minutes[0].value, 9)
  t.is(r.largest_minutes[0].at, new Date((FROM + 3 * 60) * 1000).toISOString())
  t.deepEqual(
    r.largest_minutes.map((m) => m.at),
    [3, 1, 0].map((i) => new Date((FROM + i * 60) * 1000).toISOString()),
  )
})

test('suggestions for below come from the low quantiles; a given threshold is back-tested alone with its quantile rank', (t) => {
  const values = Array.from({ length: 1000 }, (_, i) => 1000 - i)
  const below = suggestThresholds({
    stat: stat(longAgo),
    series: series(values),
    condition: 'below',
    cooldownMinutes: 0,
    lookbackDays: 30,
    clampedToDays: null,
  })
  t.deepEqual(
    below.suggestions.map((s) => s.quantile),
    [0.05, 0.01, 0.001, 0],
  )
  // The minimum (1) becomes one step inside it (1.1): `below` is strict, so 1 would never have fired on the 1.
  t.deepEqual(
    below.suggestions.map((s) => s.threshold),
    [51, 11, 2, 1.1],
  )
  t.deepEqual(
    below.suggestions.map((s) => s.minutes_in_breach),
    [50, 10, 1, 1],
  )
  const given = suggestThresholds({
    stat: stat(longAgo),
    series: series(values),
    condition: 'below',
    cooldownMinutes: 0,
    threshold: 100.5,
    lookbackDays: 30,
    clampedToDays: null,
  })
  t.is(given.suggestions.length, 1)
  t.like(given.suggestions[0], { threshold: 100.5, quantile: 0.1, would_have_fired: 1, minutes_in_breach: 100 })
})

test('suggestions warn about a stat created inside the lookback, a retention clamp, and say so when there is no data', (t) => {
  const created = new Date((FROM + 120) * 1000)
  const r = suggestThresholds({
    stat: stat(created),
    series: series([null, null, 1, 2]),
    condition: 'above',
    cooldownMinutes: 0,
    lookbackDays: 90,
    clampedToDays: 30,
  })
  t.true(r.warnings.some((w) => w.includes('created at') && w.includes(created.toISOString())))
  t.true(r.warnings.some((w) => w.includes('retention') && w.includes('30 days')))
  const empty = suggestThresholds({
    stat: stat(longAgo),
    series: series([null, null]),
    condition: 'above',
    cooldownMinutes: 0,
    lookbackDays: 30,
    clampedToDays: null,
  })
  t.deepEqual(empty.suggestions, [])
  t.is(empty.distribution.p50, null)
  t.true(empty.warnings.includes('no data in the lookback: nothing to suggest from'))
  const backfilled = suggestThresholds({
    stat: stat(created),
    series: series([1, 2, 3, 4]),
    condition: 'above',
    cooldownMinutes: 0,
    lookbackDays: 30,
    clampedToDays: null,
  })
  t.false(
    backfilled.warnings.some((w) => w.includes('created at')),
    'points older than the stat (a backfill): it had data',
  )
})

/** A deterministic random walk. */
function walk(seed: number, n: number): number[] {
  let s = seed
  const rand = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  const out = [100]
  for (let i = 1; i < n; i++) out.push(out[i - 1] + rand() - 0.5)
  return out
}

test('correlation: a scaled copy is 1, an independent walk near 0, a shifted copy is found at its lag with the right stat leading', (t) => {
  const target = diff(walk(1, 200))
  const scaled = bestLag(target, diff(walk(1, 200).map((v) => 3 * v + 7)), 'spearman', 0)
  t.true('coefficient' in scaled && scaled.coefficient > 0.9999 && scaled.lag === 0 && scaled.n === 199)
  const independent = bestLag(target, diff(walk(99, 200)), 'spearman', 0)
  t.true('coefficient' in independent && Math.abs(independent.coefficient) < 0.2)
  const base = walk(1, 203)
  const behind = diff(base.slice(0, 200))
  const ahead = diff(base.slice(3, 203)) // shows at hour i what `behind` shows at hour i + 3
  const found = bestLag(behind, ahead, 'pearson', 6)
  t.like(found, { lag: 3, n: 199 - 3 }, 'the other stat moves first: positive lag')
  t.true('coefficient' in found && found.coefficient > 0.9999)
  t.like(bestLag(ahead, behind, 'pearson', 6), { lag: -3 }, 'the target moves first: negative lag')
  const unshifted = bestLag(behind, ahead, 'pearson', 0)
  t.true('coefficient' in unshifted && Math.abs(unshifted.coefficient) < 0.3, 'without the lag search the shifted copy looks unrelated')
})

test('correlation: ties are mid-ranks (a zero-heavy counter), unknown hours are skipped pairwise, and too few pairs, no data or no variation exclude', (t) => {
  const zeros = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? i : 0))
  const r = bestLag(
    zeros,
    zeros.map((v) => v * 2),
    'spearman',
    0,
  )
  t.true('coefficient' in r && r.coefficient > 0.9999 && r.n === 40)
  const gappy = zeros.map((v, i) => (i % 2 ? null : v))
  t.like(bestLag(zeros, gappy, 'spearman', 0), { reason: 'short', n: 20 })
  t.deepEqual(bestLag(zeros, new Array(40).fill(null), 'spearman', 0), { reason: 'no_data', n: 0 })
  t.deepEqual(bestLag(zeros, new Array(40).fill(5), 'pearson', 2), { reason: 'constant', n: 40 })
  t.is(MIN_PAIRS, 24)
  t.deepEqual(diff([1, 3, null, 4, 8]), [2, null, null, 4])
})

test("correlation: the reported coefficient is simple-statistics' own on the chosen lag's pairs (gaps and shifts re-ranked), and Spearman finds a lag too", (t) => {
  const base = walk(7, 300)
  const target = diff(base.slice(5, 300)).map((v, i) => (i % 11 === 0 ? null : v)) // a gauge with gaps
  const other = diff(base.slice(0, 295)).map((v, i) => (i % 13 === 0 ? null : v! + (i % 3) * 0.01))
  const found = bestLag(target, other, 'spearman', 8)
  t.like(found, { lag: -5 }, 'the target shows 5 hours early what the other stat shows: the target moves first')
  if (!('coefficient' in found)) return t.fail()
  const xs: number[] = []
  const ys: number[] = []
  for (let i = Math.max(0, found.lag); i < target.length && i - found.lag < other.length; i++) {
    if (target[i] !== null && other[i - found.lag] !== null) {
      xs.push(target[i]!)
      ys.push(other[i - found.lag]!)
    }
  }
  t.is(found.n, xs.length)
  t.is(found.coefficient, sampleRankCorrelation(xs, ys))
  // No gaps, no shift: the whole-window ranks are the pairs' ranks.
  const a = diff(walk(3, 100))
  const b = diff(walk(4, 100))
  const whole = bestLag(a, b, 'spearman', 0)
  t.true('coefficient' in whole && Math.abs(whole.coefficient - sampleRankCorrelation(a as number[], b as number[])) < 1e-12)
})

test('stepInside is the round number one step inside the extreme, for above and below', (t) => {
  t.is(stepInside(2400, 'above'), 2300)
  t.is(stepInside(2450, 'above'), 2400)
  t.is(stepInside(1000, 'above'), 990)
  t.is(stepInside(500, 'above'), 490)
  t.is(stepInside(0.5, 'above'), 0.49)
  t.is(stepInside(-3, 'above'), -3.1)
  t.is(stepInside(100, 'below'), 110)
  t.is(stepInside(1, 'below'), 1.1)
  t.is(stepInside(0, 'below'), 0.01)
})

test('a spike the size of the maximum is caught by the top suggestion; days without data are counted', (t) => {
  // 30 days of minutes, data on the first 14 only: 100 everywhere but one minute of 2,400.
  const values: Array<number | null> = Array.from({ length: 30 * 1440 }, (_, i) =>
    i < 14 * 1440 ? (i === 5000 ? 2400 : 100 + (i % 7)) : null,
  )
  const r = suggestThresholds({
    stat: stat(longAgo),
    series: series(values),
    condition: 'above',
    cooldownMinutes: 0,
    lookbackDays: 30,
    clampedToDays: null,
  })
  const top = r.suggestions.at(-1)!
  t.true(top.threshold < 2400)
  t.is(top.would_have_fired, 1)
  t.true(r.suggestions.every((s) => s.threshold !== r.distribution.max))
  t.is(r.largest_minutes[0].value, 2400)
  t.true(r.warnings.includes('14 of 30 days have data: the suggestions are drawn from those days only'), JSON.stringify(r.warnings))
})
