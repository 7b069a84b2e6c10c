import test from 'ava'
import { replaySeries } from '../../shared/anomalies/backtest.js'
import {
  COUNT_FLOOR, HOUR, initialState, MODERATE, REL_FLOOR, stepHour, streamingArmed, updateStreaming, windowOpinion, windowVerdict,
} from '../../shared/anomalies/detector.js'
import { corpus, rng } from '../bench/anomaly-corpus.js'

const T0 = 1_700_000_000 - (1_700_000_000 % HOUR)
const noisy = (n: number, level: number, seed = 7) => {
  const r = rng(seed)
  return Array.from({ length: n }, () => level * (1 + 0.1 * (2 * r() - 1)))
}

test('window verdict: short below 8 usable hours, no_signal when every hour is 0, used otherwise', (t) => {
  t.deepEqual(windowVerdict([1, 2, 3, 4, 5, 6, 7]), { verdict: 'short', samples: 7 })
  t.deepEqual(windowVerdict(new Array(30).fill(0)), { verdict: 'no_signal', samples: 30 })
  t.deepEqual(windowVerdict([]), { verdict: 'short', samples: 0 })
  t.deepEqual(windowVerdict([0, 0, 0, 0, 0, 0, 0, 1]), { verdict: 'used', samples: 8 })
})

test('window opinion by hand: median, MAD x 1.4826, and the floors', (t) => {
  // Gauge 8..15: median 11.5, |x - 11.5| sorted = .5 .5 1.5 1.5 2.5 2.5 3.5 3.5 -> MAD 2, scale >= 2.9652.
  // 5-95 % spread: q(.95) - q(.05) of 8 values (simple-statistics) = 15 - 8 = 7 -> 7 / 3.29 = 2.1277. Relative floor .08 x 11.5 = .92.
  const w = windowOpinion('gauge', [8, 9, 10, 11, 12, 13, 14, 15], 30)!
  t.is(w.expected, 11.5)
  t.is(Math.round(w.scale * 1e4) / 1e4, 2.9652)
  t.is(Math.round(w.score * 1e4) / 1e4, Math.round(((30 - 11.5) / 2.9652) * 1e4) / 1e4)
  // A constant non-zero gauge: MAD and spread are 0, the relative floor makes it scoreable.
  const c = windowOpinion('gauge', new Array(24).fill(50), 50)!
  t.is(c.scale, REL_FLOOR * 50)
  t.is(c.score, 0)
  t.is(windowOpinion('gauge', new Array(24).fill(50), 1000)!.score, 950 / 4)
  // A counter of small counts: the scale is at least COUNT_FLOOR counts.
  t.is(windowOpinion('counter', [1, 0, 2, 1, 0, 1, 1, 0, 2, 1], 5)!.scale, COUNT_FLOOR)
  t.is(windowOpinion('gauge', [1, 2, 3], 5), null, 'short: no opinion')
})

test('streaming baseline: arms at 8 samples, not on zeros only, and a spike moves it by at most 3 scales x alpha', (t) => {
  let s = initialState().streaming
  for (let i = 0; i < 7; i++) s = updateStreaming('gauge', s, 100)
  t.false(streamingArmed(s))
  s = updateStreaming('gauge', s, 100)
  t.true(streamingArmed(s))
  t.is(s.mean, 100)
  const after = updateStreaming('gauge', s, 1e9)
  // Scale: the variance is 0, so the floor 8 % of 100 = 8; clamp at 100 + 24; weight max(.1, 1/9) -> mean 100 + 24 / 9.
  t.is(Math.round(after.mean * 1000) / 1000, 102.667)
  let z = initialState().streaming
  for (let i = 0; i < 20; i++) z = updateStreaming('counter', z, 0)
  t.false(streamingArmed(z), 'a counter that only ever read 0 is not armed')
})

test('a one-hour 20x spike on a steady gauge opens one incident that closes after two inside hours', (t) => {
  const values: number[] = noisy(60, 100)
  values[50] = 2000
  const r = replaySeries('gauge', values, T0, 24)
  t.is(r.incidents.length, 1)
  const inc = r.incidents[0]
  t.like(inc, { startedAt: T0 + 50 * HOUR, endedAt: T0 + 51 * HOUR, direction: 'spike', levelShift: false })
  t.is(inc.peak.observed, 2000)
  t.true(inc.peak.score > 5)
  t.true(inc.peak.expected > 90 && inc.peak.expected < 110)
  t.regex(inc.explanation, /2000 \(gauge mean\) vs expected 1\d\d(\.\d+)? \(median of 50 trailing hours; weighted mean of 50 hourly samples agrees\); normal range [\d.]+ to [\d.]+ \(3.5 x scale [\d.]+\); [\d.]+ deviations above/)
  t.deepEqual(r.hours.filter((h) => h.anomalous).map((h) => h.t), [T0 + 50 * HOUR])
})

test('a dip to a tenth is found, as a dip', (t) => {
  const values = noisy(60, 100)
  values[40] = values[41] = 10
  const r = replaySeries('gauge', values, T0, 24)
  t.is(r.incidents.length, 1)
  t.like(r.incidents[0], { direction: 'dip', startedAt: T0 + 40 * HOUR })
})

test('a level shift is reported once, closes, and does not alarm for the days after it', (t) => {
  const values = [...noisy(100, 100), ...noisy(200, 250, 9)]
  const r = replaySeries('gauge', values, T0, 24)
  t.is(r.incidents.length, 1)
  t.like(r.incidents[0], { startedAt: T0 + 100 * HOUR, direction: 'spike', levelShift: true })
  t.is(r.incidents[0].endedAt, T0 + 106 * HOUR)
  t.is(r.hours.filter((h) => h.anomalous && h.t > T0 + 106 * HOUR).length, 0)
  // Right after the re-seed neither baseline has 8 samples; both are armed again at the new level.
  const last = r.hours.at(-1)!
  t.is(last.window.verdict, 'used')
  t.true(last.expected! > 225 && last.expected! < 275)
})

test('one moderate hour is not an incident; two in a row on the same side are', (t) => {
  const base = new Array(48).fill(100)
  // Constant 100: scale is the 8 % floor = 8, so 100 + 4 x 8 = 132 is moderate (4 deviations), not strong.
  const one = replaySeries('gauge', [...base, 132, 100, 100, 100], T0, 24)
  t.is(one.incidents.length, 0)
  t.is(one.hours.find((h) => h.t === T0 + 48 * HOUR)!.score, 4)
  const two = replaySeries('gauge', [...base, 132, 132, 100, 100, 100], T0, 24)
  t.is(two.incidents.length, 1)
  t.is(two.incidents[0].startedAt, T0 + 48 * HOUR)
  t.true(two.hours.filter((h) => h.anomalous).length === 2)
  t.true(MODERATE < 4)
})

test('a stat whose window is short can still fire from a warm streaming baseline', (t) => {
  let state = initialState()
  for (let i = 0; i < 30; i++) state = stepHour('gauge', state, T0 + i * HOUR, [], 100).state
  // The window sees nothing (as after a re-seed, or a history read that is cut short): only the streaming baseline is armed.
  const r = stepHour('gauge', state, T0 + 30 * HOUR, [100, 100], 5000)
  t.is(r.hour.window.verdict, 'short')
  t.is(r.hour.detector, 'streaming')
  t.truthy(r.opened)
  t.is(r.opened!.detector, 'streaming')
})

test('neither baseline armed: no score, and the explanation says why', (t) => {
  const r = stepHour('counter', initialState(), T0, [0, 0, 0, 0, 0, 0, 0, 0, 0], 50)
  t.is(r.hour.score, null)
  t.is(r.hour.window.verdict, 'no_signal')
  t.regex(r.hour.explanation, /every one of the 9 hours in the window is 0 \(no_signal\).*streaming baseline has 0 of 8 samples/)
})

test('constant series, all-zero counters, sparse counters and noise within 10 % are never flagged (seeded corpus)', (t) => {
  const clean = corpus(12345, 10).filter((s) => s.group.startsWith('clean'))
  t.true(clean.length >= 50)
  for (const s of clean) {
    const r = replaySeries(s.kind, s.values, T0, 48)
    t.is(r.incidents.length, 0, `${s.group}: ${JSON.stringify(r.incidents[0]?.peak)}`)
  }
})
