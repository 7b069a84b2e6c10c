// A seeded synthetic corpus of hourly series with labelled anomaly windows,
// for `npm run bench:anomalies` and the detector's tests: spikes, dips, level
// shifts and daily cycles injected into noise; sparse counters; constant and
// all-zero series. Tune on one seed, report on another.
import type { Kind } from '../shared/stats/repo.js'

export interface LabelledSeries {
  group: string
  kind: Kind
  values: number[]
  /** Labelled anomaly windows, as [first hour index, last hour index] inclusive. */
  windows: Array<[number, number]>
}

/** mulberry32: small, fast, seeded. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
}

function poisson(r: () => number, lambda: number): number {
  if (lambda > 50) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * gauss(r)))
  const l = Math.exp(-lambda)
  let k = 0
  let p = 1
  do {
    k++
    p *= r()
  } while (p > l)
  return k - 1
}

/** Hour indexes at which to inject, at least `gap` apart, after `start`. */
function positions(r: () => number, hours: number, start: number, count: number, gap: number): number[] {
  const out: number[] = []
  for (let tries = 0; out.length < count && tries < 1000; tries++) {
    const p = start + Math.floor(r() * (hours - start - 12))
    if (out.every((q) => Math.abs(q - p) >= gap)) out.push(p)
  }
  return out.sort((a, b) => a - b)
}

/** Where scoring starts in every series: two days of lead-in. */
export const SCORE_FROM = 48

export function corpus(seed: number, perGroup = 20, hours = 720): LabelledSeries[] {
  const r = rng(seed)
  const out: LabelledSeries[] = []
  const first = SCORE_FROM + 24
  const level = () => 50 + r() * 450
  const cycle = (i: number, amp: number, phase: number) => 1 + amp * Math.sin((2 * Math.PI * (i + phase)) / 24)
  for (let k = 0; k < perGroup; k++) {
    // 10x spikes on a noisy gauge (5 % noise).
    {
      const L = level()
      const values = Array.from({ length: hours }, () => L * (1 + 0.05 * gauss(r)))
      const at = positions(r, hours, first, 3, 72)
      for (const p of at) values[p] = L * 10
      out.push({ group: 'spike 10x (gauge)', kind: 'gauge', values, windows: at.map((p) => [p, p]) })
    }
    // 10x spikes on a Poisson counter.
    {
      const lambda = 20 + r() * 480
      const values = Array.from({ length: hours }, () => poisson(r, lambda))
      const at = positions(r, hours, first, 3, 72)
      for (const p of at) values[p] = poisson(r, lambda * 10)
      out.push({ group: 'spike 10x (counter)', kind: 'counter', values, windows: at.map((p) => [p, p]) })
    }
    // 10x spikes on a daily cycle (amplitude 30-50 %).
    {
      const L = level()
      const amp = 0.3 + r() * 0.2
      const phase = r() * 24
      const values = Array.from({ length: hours }, (_, i) => L * cycle(i, amp, phase) * (1 + 0.05 * gauss(r)))
      const at = positions(r, hours, first, 3, 72)
      for (const p of at) values[p] = L * 10
      out.push({ group: 'spike 10x on daily cycle', kind: 'gauge', values, windows: at.map((p) => [p, p]) })
    }
    // 3x spikes (harder).
    {
      const L = level()
      const values = Array.from({ length: hours }, () => L * (1 + 0.05 * gauss(r)))
      const at = positions(r, hours, first, 3, 72)
      for (const p of at) values[p] = L * 3
      out.push({ group: 'spike 3x (gauge)', kind: 'gauge', values, windows: at.map((p) => [p, p]) })
    }
    // Dips to a tenth for 1 to 3 hours.
    {
      const L = level()
      const values = Array.from({ length: hours }, () => L * (1 + 0.05 * gauss(r)))
      const at = positions(r, hours, first, 3, 72)
      const windows: Array<[number, number]> = []
      for (const p of at) {
        const len = 1 + Math.floor(r() * 3)
        for (let i = p; i < p + len; i++) values[i] = L * 0.1 * (1 + 0.05 * gauss(r))
        windows.push([p, p + len - 1])
      }
      out.push({ group: 'dip to 10 %', kind: 'gauge', values, windows })
    }
    // One level shift (x2.5 or x0.4) that stays: found once, then quiet.
    {
      const L = level()
      const p = first + 48 + Math.floor(r() * (hours - first - 200))
      const f = r() < 0.5 ? 2.5 : 0.4
      const values = Array.from({ length: hours }, (_, i) => L * (i >= p ? f : 1) * (1 + 0.05 * gauss(r)))
      out.push({ group: 'level shift', kind: 'gauge', values, windows: [[p, p + 5]] })
    }
    // Clean noise: gauges within +-10 %, daily-cycle counters.
    {
      const L = level()
      out.push({
        group: 'clean: noise within 10 %',
        kind: 'gauge',
        values: Array.from({ length: hours }, () => L * (1 + 0.1 * (2 * r() - 1))),
        windows: [],
      })
      const lambda = 20 + r() * 200
      const amp = 0.3 + r() * 0.4
      const phase = r() * 24
      out.push({
        group: 'clean: daily-cycle counter',
        kind: 'counter',
        values: Array.from({ length: hours }, (_, i) => poisson(r, lambda * cycle(i, amp, phase))),
        windows: [],
      })
    }
    // Sparse counters with small counts (0.05 to 3 an hour, some bursty): never anomalies.
    {
      const lambda = 0.05 + r() * 3
      const bursty = r() < 0.5
      out.push({
        group: 'clean: sparse counter',
        kind: 'counter',
        windows: [],
        values: Array.from({ length: hours }, () => (bursty && r() < 0.02 ? poisson(r, 4 * lambda + 2) : poisson(r, lambda))),
      })
    }
    // Constant gauge and all-zero counter.
    {
      const c = Math.round(level())
      out.push({ group: 'clean: constant gauge', kind: 'gauge', values: new Array(hours).fill(c), windows: [] })
      out.push({ group: 'clean: all-zero counter', kind: 'counter', values: new Array(hours).fill(0), windows: [] })
    }
  }
  return out
}
