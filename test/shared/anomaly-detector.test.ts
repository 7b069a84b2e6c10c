import test from 'ava'
import { LEAD_IN_HOURS, replaySeries } from '../../shared/anomalies/backtest.js'
import {
  ABSORBED_SHIFT_HOURS,
  ALPHA,
  COUNT_FLOOR,
  dailyCycle,
  HOUR,
  initialState,
  LEVEL_SHIFT_HOURS,
  REL_FLOOR,
  stepHour,
  streamingArmed,
  THRESHOLD,
  updateStreaming,
  weeklyCycle,
  windowOpinion,
  windowVerdict,
} from '../../shared/anomalies/detector.js'
import { corpus, rng } from '../../bench/anomaly-corpus.js'

const T0 = 1_700_000_000 - (1_700_000_000 % HOUR)
/** Hours starting at T0, as the detector's trailing input. */
const trail = (values: Array<number | null>, from = T0) => ({ values, from })
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

test('window opinion by hand: median, standard deviation, and the floors', (t) => {
  // Gauge 8..15: median 11.5, population standard deviation sqrt(5.25) = 2.2913; relative floor .01 x 11.5.
  const w = windowOpinion('gauge', trail([8, 9, 10, 11, 12, 13, 14, 15]), T0 + 8 * HOUR, 30)!
  t.is(w.expected, 11.5)
  t.is(Math.round(w.scale * 1e4) / 1e4, 2.2913)
  t.is(Math.round(w.score * 1e4) / 1e4, Math.round(((30 - 11.5) / Math.sqrt(5.25)) * 1e4) / 1e4)
  // A constant non-zero gauge: the spread is 0, the relative floor makes it scoreable.
  const c = windowOpinion('gauge', trail(new Array(24).fill(50)), T0 + 24 * HOUR, 50)!
  t.is(c.scale, REL_FLOOR * 50)
  t.is(c.score, 0)
  t.is(windowOpinion('gauge', trail(new Array(24).fill(50)), T0 + 24 * HOUR, 1000)!.score, 950 / 0.5)
  // A counter of small counts: the scale is at least COUNT_FLOOR counts.
  t.is(windowOpinion('counter', trail([1, 0, 2, 1, 0, 1, 1, 0, 2, 1]), T0 + 10 * HOUR, 5)!.scale, COUNT_FLOOR)
  t.is(windowOpinion('gauge', trail([1, 2, 3]), T0 + 3 * HOUR, 5), null, 'short: no opinion')
})

test('streaming baseline: arms at 8 samples, not on zeros only, and a spike moves it by at most 3 scales x alpha', (t) => {
  let s = initialState().streaming
  for (let i = 0; i < 7; i++) s = updateStreaming('gauge', s, 100)
  t.false(streamingArmed(s))
  s = updateStreaming('gauge', s, 100)
  t.true(streamingArmed(s))
  t.is(s.mean, 100)
  const after = updateStreaming('gauge', s, 1e9)
  // Scale: the variance is 0, so the floor 1 % of 100 = 1; clamp at 100 + 3; weight max(ALPHA, 1/9) -> mean 100 + 3 x that.
  t.is(Math.round(after.mean * 1000) / 1000, Math.round((100 + 3 * Math.max(ALPHA, 1 / 9)) * 1000) / 1000)
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
  t.true(inc.peak.score > THRESHOLD)
  t.true(inc.peak.expected > 90 && inc.peak.expected < 110)
  t.regex(
    inc.explanation,
    /lately this stat \(gauge mean\) is usually [\d.]+ to 1\d\d(\.\d+)?; it was 2000, [\d.]+ times the usual spread above\. Expected (9\d|1[01]\d)(\.\d+)? from the 50 trailing hours; the weighted mean of 50 samples agrees/,
  )
  t.deepEqual(
    r.hours.filter((h) => h.anomalous).map((h) => h.t),
    [T0 + 50 * HOUR],
  )
})

test('a dip to a tenth is found, as a dip', (t) => {
  const values = noisy(60, 100)
  values[40] = values[41] = 10
  const r = replaySeries('gauge', values, T0, 24)
  t.is(r.incidents.length, 1)
  t.like(r.incidents[0], { direction: 'dip', startedAt: T0 + 40 * HOUR })
})

test('once both baselines are armed, an hour is flagged only where the streaming one agrees: a stat that got noisier lately is not flagged for it', (t) => {
  const r = rng(7)
  const quiet = Array.from({ length: 150 }, () => 1000 + 10 * (2 * r() - 1))
  // The last 30 hours swing +-24 to 40: inside the week's range, and what the weighted mean of recent hours learns.
  const louder = Array.from({ length: 30 }, (_, i) => 1000 + (i % 2 ? 1 : -1) * 40 * (0.6 + 0.4 * r()))
  const calm = replaySeries('gauge', [...quiet, 1110], T0, 24).hours.at(-1)!
  t.true(calm.anomalous, 'after a quiet week 1110 is flagged')
  t.is(calm.detector, 'both')
  const last = replaySeries('gauge', [...quiet, ...louder, 1110], T0, 24).hours.at(-1)!
  t.true(last.score! >= THRESHOLD, `the window alone would flag it (score ${last.score})`)
  t.false(last.anomalous)
  t.is(last.detector, 'window')
  t.regex(last.explanation, /it was 1110, outside, but within 4 spreads of the recent hours' weighted mean [\d.]+, so not flagged/)
})

test('a gauge that never went below 0 is not told it usually ranges below 0; one that did keeps its range', (t) => {
  const bursty = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? 100 : 5))
  const h = replaySeries('gauge', bursty, T0, 24).hours.at(-1)!
  t.is(h.lower, 0)
  t.regex(h.explanation, /is usually 0 to [\d.]+;/)
  const signed = replaySeries(
    'gauge',
    bursty.map((v, i) => (i === 10 ? -5 : v)),
    T0,
    24,
  ).hours.at(-1)!
  t.true(signed.lower! < 0, `lower ${signed.lower}`)
})

test('a level shift is reported once, closes, and does not alarm for the days after it', (t) => {
  const values = [...noisy(100, 100), ...noisy(200, 250, 9)]
  const r = replaySeries('gauge', values, T0, 24)
  t.is(r.incidents.length, 1)
  t.like(r.incidents[0], { startedAt: T0 + 100 * HOUR, direction: 'spike', levelShift: true })
  // It closes once the new level is inside the band (at the latest after LEVEL_SHIFT_HOURS), and nothing after it is flagged.
  const ended = r.incidents[0].endedAt!
  t.true(
    ended >= T0 + (100 + ABSORBED_SHIFT_HOURS) * HOUR && ended <= T0 + (100 + LEVEL_SHIFT_HOURS) * HOUR,
    `ended ${(ended - T0) / HOUR}`,
  )
  t.regex(r.incidents[0].explanation, /level shift: the stat stayed above [\d.]+ for \d+ hours, baselines re-seeded from the new level/)
  t.is(r.hours.filter((h) => h.anomalous && h.t >= ended).length, 0)
  // Both baselines are armed again at the new level.
  const last = r.hours.at(-1)!
  t.is(last.window.verdict, 'used')
  t.true(last.expected! > 225 && last.expected! < 275)
})

/** 100 at 04:00 UTC rising to 300 at 16:00 (3 to 1), noise within 5 %. */
const daily = (days: number, seed = 3) => {
  const r = rng(seed)
  return Array.from({ length: days * 24 }, (_, i) => {
    const h = (T0 / HOUR + i) % 24
    return (200 - 100 * Math.cos((2 * Math.PI * (h - 4)) / 24)) * (1 + 0.05 * (2 * r() - 1))
  })
}

test('a daily cycle is learned: its peaks and troughs are not flagged, and the band follows the hour of the day', (t) => {
  const values = daily(14)
  t.truthy(dailyCycle(trail(values.slice(-167))), 'the cycle is seen in a week of hours')
  t.is(dailyCycle(trail(noisy(167, 100))), null, 'noise has no cycle')
  const r = replaySeries('gauge', values, T0, 48)
  t.deepEqual(r.incidents, [], 'a clean daily cycle is never listed')
  // From hour 48, each hour of the day is known from two days until hour 72: its range is doubled until then (with
  // the usual range, hour 63 of this series was a dip).
  t.regex(
    r.hours[63 - 48].explanation,
    /the range is 8 x the spread [\d.]+ either side \(twice the usual 4: this hour of its daily cycle is known from fewer than 3 days\)$/,
  )
  t.regex(r.hours[72 - 48].explanation, /the range is 4 x the spread [\d.]+ either side$/)
  const at = (hourOfDay: number) => r.hours.filter((h) => (h.t / HOUR) % 24 === hourOfDay).at(-1)!
  t.is(at(4).cycle, 'daily')
  t.true(at(4).expected! > 90 && at(4).expected! < 110, `04:00 expects about 100, not the day's median (${at(4).expected})`)
  t.true(at(16).expected! > 280 && at(16).expected! < 320, `16:00 expects about 300 (${at(16).expected})`)
  t.true(at(4).upper! < 200)
})

test("a contextual anomaly: the usual peak level at the trough hour is flagged, with the hour's own range in the explanation", (t) => {
  const values = daily(14)
  const i = values.length - 24 + ((28 - ((T0 / HOUR) % 24)) % 24) // 04:00 on the last day
  values[i] = 300
  const r = replaySeries('gauge', values, T0, 48)
  t.is(r.incidents.length, 1)
  const inc = r.incidents[0]
  t.like(inc, { startedAt: T0 + i * HOUR, direction: 'spike' })
  t.regex(
    inc.explanation,
    /04:00-05:00 UTC: at 04:00 UTC this stat \(gauge mean\) is usually [\d.]+ to 1\d\d(\.\d+)?; it was 300, [\d.]+ times the usual spread above\. Expected (9\d|1[01]\d)(\.\d+)? from the 167 trailing hours, following its daily cycle/,
  )
})

test('after one 5x spike in a daily-cycle counter, each of the 24 hours after it gets the band it has without the spike, at every hour of the day', (t) => {
  // The series of the API test (test/api/anomalies.test.ts), whose hours fall where the clock puts them: two weeks of
  // a counter between about 40 and 165 (noise within 3 counts), the spike 4 days before the newest hour, replayed as
  // the back-test of the last 7 days does; here with the newest hour at each hour of the day.
  const moved: string[] = []
  for (let hourOfDay = 0; hourOfDay < 24; hourOfDay++) {
    const newest = T0 - (T0 % 86_400) + 30 * 86_400 + hourOfDay * HOUR
    const hours = 14 * 24
    const first = newest - (hours - 1) * HOUR
    const usual = (i: number) => Math.round(102 - 62 * Math.cos((2 * Math.PI * (first / HOUR + i)) / 24) + 3 * Math.sin(i * 1.7))
    const control = Array.from({ length: hours }, (_, i) => usual(i))
    const s = hours - 1 - 4 * 24
    const values = control.map((v, i) => (i === s ? 5 * v + 400 : v))
    const from = newest - 7 * 24 * HOUR - LEAD_IN_HOURS * HOUR
    const dense = (xs: number[]) => [...new Array<null>((first - from) / HOUR).fill(null), ...xs]
    const spiked = replaySeries('counter', dense(values), from, LEAD_IN_HOURS).hours
    const without = replaySeries('counter', dense(control), from, LEAD_IN_HOURS).hours
    const at = (hs: typeof spiked, time: number) => hs.find((h) => h.t === time)!
    const spikeAt = first + s * HOUR
    t.true(at(spiked, spikeAt).anomalous, `${hourOfDay}:00: the spike is flagged`)
    for (let h = 1; h <= 24; h++) {
      const a = at(spiked, spikeAt + h * HOUR)
      const b = at(without, spikeAt + h * HOUR)
      const tol = 0.1 * (b.upper! - b.lower!)
      if (Math.abs(a.lower! - b.lower!) > tol || Math.abs(a.upper! - b.upper!) > tol)
        moved.push(
          `newest at ${hourOfDay}:00, hour +${h}: ${a.lower!.toFixed(1)}-${a.upper!.toFixed(1)} after the spike, ${b.lower!.toFixed(1)}-${b.upper!.toFixed(1)} without it`,
        )
    }
  }
  t.deepEqual(moved, [])
})

test('a weekly cycle is learned once three weeks are there: a quiet weekend is not a dip, a weekend hour at weekday level is a spike', (t) => {
  // Weekdays: the daily cycle; Saturdays and Sundays: 50 all day.
  const r0 = rng(5)
  const dayOf = (i: number) => (Math.floor((T0 + i * HOUR) / 86_400) + 3) % 7 // 0 = Monday
  const hourOf = (i: number) => (T0 / HOUR + i) % 24
  const values = Array.from(
    { length: 35 * 24 },
    (_, i) => (dayOf(i) >= 5 ? 50 : 200 - 100 * Math.cos((2 * Math.PI * (hourOf(i) - 4)) / 24)) * (1 + 0.05 * (2 * r0() - 1)),
  )
  t.truthy(weeklyCycle(trail(values.slice(0, 504))))
  t.is(weeklyCycle(trail(daily(21))), null, 'a daily cycle alone is not weekly')
  const r = replaySeries('gauge', values, T0, 504)
  t.deepEqual(r.incidents, [], 'weekends are part of the cycle')
  t.is(r.hours.at(-1)!.cycle, 'weekly')
  // A Saturday 16:00 at the weekday 16:00 level, in the last week.
  let sat = values.length - 1
  while (!(dayOf(sat) === 5 && hourOf(sat) === 16)) sat--
  values[sat] = 300
  const flagged = replaySeries('gauge', values, T0, 504)
  t.is(flagged.incidents.length, 1)
  t.like(flagged.incidents[0], { startedAt: T0 + sat * HOUR, direction: 'spike' })
  t.regex(flagged.incidents[0].explanation, /on Saturdays at 16:00 UTC this stat/)
})

test('a stat whose window is short can still fire from a warm streaming baseline', (t) => {
  let state = initialState()
  for (let i = 0; i < 30; i++) state = stepHour('gauge', state, T0 + i * HOUR, trail([], T0 + i * HOUR), 100).state
  // The window sees nothing (as after a re-seed, or a history read that is cut short): only the streaming baseline is armed.
  const r = stepHour('gauge', state, T0 + 30 * HOUR, trail([100, 100], T0 + 28 * HOUR), 5000)
  t.is(r.hour.window.verdict, 'short')
  t.is(r.hour.detector, 'streaming')
  t.truthy(r.opened)
  t.is(r.opened!.detector, 'streaming')
})

test('neither baseline armed: no score, and the explanation says why', (t) => {
  const r = stepHour('counter', initialState(), T0 + 9 * HOUR, trail([0, 0, 0, 0, 0, 0, 0, 0, 0]), 50)
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

test('hours before a stat began are stepped as stepHour would (cheaply): the same verdicts, weekly looks and state', (t) => {
  // Four weeks of nothing (a replay reaching back before the stat), then two weeks of a daily cycle with a spike.
  const lead = 28 * 24
  const values: Array<number | null> = [...new Array(lead).fill(null), ...noisy(14 * 24, 100)]
  values[values.length - 5] = 900
  const fast = replaySeries('gauge', values, T0, 0, initialState())
  // The reference: every hour through stepHour.
  let st = initialState()
  const slow = []
  for (let i = 0; i < values.length; i++) {
    const lo = Math.max(0, i - 3 * 168)
    const r = stepHour('gauge', st, T0 + i * HOUR, { values: values.slice(lo, i), from: T0 + lo * HOUR }, values[i])
    st = r.state
    slow.push(r.hour)
  }
  t.deepEqual(
    fast.hours.map((h) => [h.t, h.observed, h.expected, h.score, h.anomalous, h.window, h.streaming, h.explanation]),
    slow.map((h) => [h.t, h.observed, h.expected, h.score, h.anomalous, h.window, h.streaming, h.explanation]),
  )
  t.deepEqual(fast.state.weekly, st.weekly)
  t.is(fast.state.lastHour, st.lastHour)
  t.is(fast.incidents.length, 1)
})
