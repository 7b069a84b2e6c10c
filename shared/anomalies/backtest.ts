// Replaying the detector over a stat's history as if a sweep had run after
// every complete hour (docs/decisions.md §11, back-test extension). The
// lead-in before the first scored hour only warms the streaming baseline, as
// a stat's first sweep does, so the replay and the live sweep agree.
import type { Kind } from '../stats/repo.js'
import {
  initialState,
  replay,
  SENSITIVITY_THRESHOLD,
  warm,
  type Sensitivity,
  WEEKLY_HOURS,
  type ClosedIncident,
  type DetectorState,
  type Hour,
  type OpenIncident,
} from './detector.js'

export interface ReplayedIncident {
  startedAt: number
  /** Null while still open at the end of the replay. */
  endedAt: number | null
  direction: OpenIncident['direction']
  detector: OpenIncident['detector']
  levelShift: boolean
  peak: OpenIncident['peak']
  explanation: string
}

export interface Replayed {
  state: DetectorState
  hours: Hour[]
  incidents: ReplayedIncident[]
}

/** Lead-in hours a replay needs before its first scored hour: three weeks, for a weekly cycle. */
export const LEAD_IN_HOURS = WEEKLY_HOURS

/**
 * Replays a dense hourly series (shared/stats/hourly.ts) from index `lo`: a fresh state
 * warmed on the lead-in [lo - LEAD_IN_HOURS, lo), then every hour from `lo` stepped.
 * With `state`, continues from it instead (no warm-up).
 */
export function replaySeries(
  kind: Kind,
  values: ReadonlyArray<number | null>,
  from: number,
  lo: number,
  state?: DetectorState,
  sensitivity: Sensitivity = 'normal',
): Replayed {
  const start = state ?? warm(kind, initialState(), values, from, lo - LEAD_IN_HOURS, lo)
  const r = replay(kind, start, values, from, lo, SENSITIVITY_THRESHOLD[sensitivity])
  const incidents: ReplayedIncident[] = []
  const byStart = new Map<number, ReplayedIncident>()
  const fromClosed = (c: ClosedIncident): ReplayedIncident => ({ ...c })
  for (const e of r.events) {
    if (e.closed) {
      const existing = byStart.get(e.closed.startedAt)
      if (existing) Object.assign(existing, fromClosed(e.closed))
      else incidents.push(fromClosed(e.closed))
    }
    if (e.opened) {
      const inc: ReplayedIncident = {
        startedAt: e.opened.startedAt,
        endedAt: null,
        direction: e.opened.direction,
        detector: e.opened.detector,
        levelShift: false,
        peak: e.opened.peak,
        explanation: e.opened.explanation,
      }
      byStart.set(inc.startedAt, inc)
      incidents.push(inc)
    }
  }
  // An incident still open carries its latest peak.
  const open = r.state.incident
  if (open) {
    const inc = byStart.get(open.startedAt)
    if (inc) Object.assign(inc, { peak: open.peak, explanation: open.explanation })
  }
  return { state: r.state, hours: r.hours, incidents }
}
