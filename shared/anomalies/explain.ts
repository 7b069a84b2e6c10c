// The detector's verdicts in English (shared/anomalies/detector.ts keeps the statistics): what an hour was,
// what was expected and from what, stored with the hour and the incident. Times are UTC here; a reader's
// clock is applied when they are shown (shared/time/zones.ts, explanationInZone).
import { HOUR } from '../stats/hourly.js'
import type { Kind } from '../stats/repo.js'
import type { Cycle, DetectorName, Direction, Peak } from './detector.js'

/** Numbers as a person reads them: up to 4 significant digits, no exponent for ordinary magnitudes. */
export function fmt(x: number): string {
  if (x === 0) return '0'
  const a = Math.abs(x)
  if (a >= 1e-3 && a < 1e9) return String(Number(x.toPrecision(4)))
  return x.toPrecision(3)
}

const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']
const hh = (t: number) => new Date(t * 1000).toISOString().slice(11, 16)

function hourLabel(t: number): string {
  return `${new Date(t * 1000).toISOString().slice(0, 10)} ${hh(t)}-${hh(t + HOUR)} UTC`
}

/** "at 04:00 UTC", "on Mondays at 04:00 UTC" or "this week": when the expected value applies. */
function whenLabel(cycle: Cycle, t: number): string {
  if (cycle === 'daily') return `at ${hh(t)} UTC`
  if (cycle === 'weekly') return `on ${DAYS[(new Date(t * 1000).getUTCDay() + 6) % 7]}s at ${hh(t)} UTC`
  return 'lately'
}

function describeBaseline(detector: DetectorName, cycle: Cycle, windowSamples: number, streamingSamples: number): string {
  const shape = cycle === 'daily' ? ', following its daily cycle' : cycle === 'weekly' ? ', following its weekly cycle (3 weeks)' : ''
  const w = `from the ${windowSamples} trailing hours${shape}`
  const s = `from a weighted mean of ${streamingSamples} hourly samples${shape}`
  return detector === 'window' ? w : detector === 'streaming' ? s : `${w}; the weighted mean of ${streamingSamples} samples agrees`
}

const unitOf = (kind: Kind) => (kind === 'counter' ? 'counter sum' : 'gauge mean')

/** A gauge hour without points. */
export function explainNoPoints(t: number): string {
  return `${hourLabel(t)}: no points this hour (a gauge is not scored without samples)`
}

/** An hour neither baseline could score: the window too short or all zeros, the streaming baseline unarmed. */
export function explainUnscored(
  kind: Kind,
  t: number,
  x: number,
  window: { verdict: string; samples: number },
  streamingSamples: number,
  minSamples: number,
): string {
  const why =
    window.verdict === 'no_signal'
      ? `every one of the ${window.samples} hours in the window is 0 (no_signal)`
      : `the window has ${window.samples} of ${minSamples} usable hourly buckets (short)`
  return `${hourLabel(t)}: ${fmt(x)} (${unitOf(kind)}) not scored: ${why}, and the streaming baseline has ${streamingSamples} of ${minSamples} samples${streamingSamples >= minSamples ? ' but has only seen 0' : ''}`
}

export interface Scored {
  kind: Kind
  t: number
  x: number
  cycle: Cycle
  detector: DetectorName
  expected: number
  scale: number
  score: number
  lower: number
  upper: number
  /** Spreads either side: `threshold`, or twice it for a young stat. */
  k: number
  threshold: number
  /** Why the range is doubled (a young stat, or a young cycle), when it is. */
  young: string | null
  outside: boolean
  /** The streaming baseline's expected value where it disagreed with the window's flag. */
  overruledBy: number | null
  windowSamples: number
  streamingSamples: number
}

/** A scored hour: its usual range, where it fell, and which baseline said so from what. */
export function explainScored(h: Scored): string {
  const verdict = h.outside
    ? `it was ${fmt(h.x)}, ${fmt(Math.abs(h.score))} times the usual spread ${h.score > 0 ? 'above' : 'below'}`
    : h.overruledBy !== null
      ? `it was ${fmt(h.x)}, outside, but within ${h.threshold} spreads of the recent hours' weighted mean ${fmt(h.overruledBy)}, so not flagged`
      : `it was ${fmt(h.x)}, inside`
  return (
    `${hourLabel(h.t)}: ${whenLabel(h.cycle, h.t)} this stat (${unitOf(h.kind)}) is usually ${fmt(h.lower)} to ${fmt(h.upper)}; ${verdict}. ` +
    `Expected ${fmt(h.expected)} ${describeBaseline(h.detector, h.cycle, h.windowSamples, h.streamingSamples)}; the range is ${h.k} x the spread ${fmt(h.scale)} either side${h.young ? ` (twice the usual ${h.threshold}: ${h.young})` : ''}`
  )
}

/** How a level shift is told, whichever rule found it: where the stat went past and for how long. */
export function shiftWords(direction: Direction, before: { lower: number; upper: number } | undefined, hours: number): string {
  const past = before ? ` ${fmt(direction === 'spike' ? before.upper : before.lower)}` : ' its range'
  return `level shift: the stat stayed ${direction === 'spike' ? 'above' : 'below'}${past} for ${hours} hours, baselines re-seeded from the new level`
}

/**
 * An incident in the words a person needs, before any statistics: the usual range at that hour (and weekday, for a
 * weekly cycle), what it was, and since when, e.g. "Usually 40.5 to 160.6 at 12:00 UTC; it was 900, since
 * 2026-11-22 12:00-13:00 UTC". The explanation keeps the figures behind it (the page shows it under Details).
 * Incidents stored before the peak carried its cycle take it from their explanation's own words.
 */
export function summarize(
  i: { peak: Peak; startedAt: number; endedAt: number | null; levelShift: boolean; direction: Direction },
  explanation: string,
): string {
  const { peak } = i
  const cycle: Cycle =
    peak.cycle ??
    (/: on \w+s at \d\d:\d\d UTC this stat/.test(explanation)
      ? 'weekly'
      : /: at \d\d:\d\d UTC this stat/.test(explanation)
        ? 'daily'
        : 'none')
  const hours = i.endedAt === null ? null : Math.round((i.endedAt - i.startedAt) / HOUR)
  const since =
    hours === null
      ? `since ${hourLabel(i.startedAt)}`
      : hours <= 1
        ? `during ${hourLabel(i.startedAt)}`
        : `for ${hours} hours from ${hourLabel(i.startedAt)}`
  const shift = i.levelShift ? `; it moved ${i.direction === 'spike' ? 'up' : 'down'} and stayed there` : ''
  return `Usually ${fmt(peak.lower)} to ${fmt(peak.upper)} ${whenLabel(cycle, peak.t)}; it was ${fmt(peak.observed)}, ${since}${shift}`
}
