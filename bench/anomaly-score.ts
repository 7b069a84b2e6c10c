// Scoring a detector's flagged hours against labelled windows, and the plain
// 3-sigma z-score reference measured beside it.
import { MIN_SAMPLES, type Sensitivity, WINDOW_HOURS } from '../shared/anomalies/detector.js'
import { replaySeries } from '../shared/anomalies/backtest.js'
import type { Kind } from '../shared/stats/repo.js'

export interface Tally {
  windows: number
  found: number
  scored: number
  /** Flagged hours outside every labelled window (a window's two following hours are not counted either way). */
  falseFlags: number
  /** NAB's standard-profile score, raw, and what a detector that never fires and a perfect one would score. */
  nab: { raw: number; null: number; perfect: number }
}

export const emptyTally = (): Tally => ({ windows: 0, found: 0, scored: 0, falseFlags: 0, nab: { raw: 0, null: 0, perfect: 0 } })

/** NAB's standard profile (config/profiles.json). */
const NAB_WEIGHTS = { tp: 1, fn: 1, fp: 0.11 }

/** NAB's scaled sigmoid (nab/scorer.py): about +1 at a window's left edge, 0 at its right, towards -1 far past it. */
function scaledSigmoid(position: number): number {
  return position > 3 ? -1 : 2 / (1 + Math.exp(5 * position)) - 1
}

/**
 * NAB's scoring of one series (nab/scorer.py), an hour for a row: in a window only the earliest detection counts,
 * weighted by how early it came; a missed window costs fn; a detection outside every window costs fp, scaled by
 * its distance past the previous window (fully before any window); the probationary hours are not scored.
 */
export function nabScore(
  flagged: boolean[],
  windows: Array<[number, number]>,
  probation: number,
): { raw: number; null: number; perfect: number } {
  const sorted = [...windows].sort((a, b) => a[0] - b[0])
  let raw = 0
  let prev: [number, number] | null = null
  let w = 0
  const credited = new Set<number>()
  for (let i = 0; i < flagged.length; i++) {
    while (w < sorted.length && i > sorted[w][1]) prev = sorted[w++]
    const inside = w < sorted.length && i >= sorted[w][0]
    if (!flagged[i]) continue
    if (inside) {
      if (credited.has(w)) continue
      credited.add(w)
      const [a, b] = sorted[w]
      raw += NAB_WEIGHTS.tp * scaledSigmoid(-(b - i + 1) / (b - a + 1))
    } else if (i >= probation) {
      raw += NAB_WEIGHTS.fp * (prev ? scaledSigmoid(Math.abs(prev[1] - i) / Math.max(1, prev[1] - prev[0])) : -1)
    }
  }
  raw -= NAB_WEIGHTS.fn * (sorted.length - credited.size)
  return { raw, null: -NAB_WEIGHTS.fn * sorted.length, perfect: NAB_WEIGHTS.tp * scaledSigmoid(-1) * sorted.length }
}

/** The normalised NAB score: 0 for a detector that never fires, 100 for a perfect one; null without windows. */
export const nabNormalised = (t: Tally) =>
  t.nab.perfect === t.nab.null ? null : (100 * (t.nab.raw - t.nab.null)) / (t.nab.perfect - t.nab.null)

export function tally(t: Tally, flagged: boolean[], windows: Array<[number, number]>, lo: number): void {
  const inWindow = (i: number) => windows.some(([a, b]) => i >= a && i <= b + 2)
  t.windows += windows.length
  t.found += windows.filter(([a, b]) => flagged.slice(a, b + 1).some(Boolean)).length
  for (let i = lo; i < flagged.length; i++) {
    t.scored++
    if (flagged[i] && !inWindow(i)) t.falseFlags++
  }
  const nab = nabScore(flagged, windows, lo)
  t.nab.raw += nab.raw
  t.nab.null += nab.null
  t.nab.perfect += nab.perfect
}

/** The detector's flagged hours (the back-test's `anomalous`), indexed like `values`. */
export function detectorFlags(kind: Kind, values: Array<number | null>, lo: number, sensitivity: Sensitivity = 'normal'): boolean[] {
  const r = replaySeries(kind, values, 0, lo, undefined, sensitivity)
  const flags = new Array<boolean>(values.length).fill(false)
  r.hours.forEach((h, k) => {
    flags[lo + k] = h.anomalous
  })
  return flags
}

/** Plain z-score: |x - mean| > `sigmas` (3) sample standard deviations of the same trailing window (sliding sums, so the reference is cheap). */
export function zscoreFlags(values: Array<number | null>, lo: number, sigmas = 3): boolean[] {
  const flags = new Array<boolean>(values.length).fill(false)
  let n = 0
  let sum = 0
  let sq = 0
  const add = (v: number | null, sign: 1 | -1) => {
    if (v === null) return
    n += sign
    sum += sign * v
    sq += sign * v * v
  }
  for (let i = 0; i < values.length; i++) {
    // The window of hour i: the WINDOW_HOURS - 1 hours before it, as the detector's.
    if (i > 0) add(values[i - 1], 1)
    if (i - WINDOW_HOURS >= 0) add(values[i - WINDOW_HOURS], -1)
    const x = values[i]
    if (i < lo || x === null || n < MIN_SAMPLES) continue
    const mean = sum / n
    const sd = Math.sqrt(Math.max(0, (sq - n * mean * mean) / (n - 1)))
    flags[i] = Math.abs(x - mean) > sigmas * sd + 1e-9 * Math.abs(mean)
  }
  return flags
}

export const recall = (t: Tally) => (t.windows ? t.found / t.windows : null)
export const falsePer1000 = (t: Tally) => (t.scored ? (1000 * t.falseFlags) / t.scored : 0)
