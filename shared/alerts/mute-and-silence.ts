// The rules of docs/decisions.md §18 that sit on top of docs/decisions.md §I-3.2's state
// machine (conditions.ts), as pure functions: what silence means for a
// threshold alert (on_no_data), and what a mute withholds. Evaluation
// (evaluate.ts) runs step() first, then these.
import type { AlertState, Rule, Step } from './conditions.js'
import { THRESHOLD_CONDITIONS, type OnNoData } from './schema.js'

export type EventKind = 'fired' | 'resolved' | 'suppressed' | 'muted' | 'test' | 'changed'

/**
 * What silence decides for a threshold alert whose stat has received no point (by arrival time) for longer
 * than `silenceMinutes` (its window_minutes when given, else 60): on_no_data `alert` a breach (true),
 * `resolve` a recovery (false). Undefined when the value decides as usual (keep, not silent long enough, or
 * a condition that is about missing data already).
 */
export function silenceVerdict(rule: Rule, onNoData: OnNoData, silentSeconds: number | null, silenceMinutes: number): boolean | undefined {
  if (onNoData === 'keep' || silentSeconds === null || !THRESHOLD_CONDITIONS.includes(rule.condition)) return undefined
  if (silentSeconds <= silenceMinutes * 60) return undefined
  return onNoData === 'alert'
}

export interface Managed extends AlertState {
  /** The open incident's fire was withheld by a mute (not yet delivered). */
  incidentMuted: boolean
  /** The incident whose resolve a mute withheld after its fire was delivered: sent when the mute ends. */
  resolveWithheld: string | null
}

export interface Outcome {
  next: Managed
  /** A delivery to queue now, if any. */
  deliver?: 'fired' | 'resolved'
  /** A line of the alert's history, if this evaluation changed anything. */
  record?: { event: EventKind; detail: string | null }
  /** An incident whose withheld resolve is to be delivered now (the mute ended), besides `deliver`. */
  releasedResolve?: string
}

/**
 * Applies a mute to one evaluation's step. Muted: state goes on, deliveries are withheld (a withheld fire is
 * remembered on the incident, a withheld resolve of a delivered fire too). Not muted (the mute ended or was
 * lifted): an incident whose fire was withheld and whose breach is still in force is delivered now, and so is a
 * withheld resolve, so that a receiver never keeps an incident open that has ended. Every transition leaves a
 * line in the history.
 */
export function applyMute(current: Managed, s: Step, mutedUntil: Date | null, now: Date): Outcome {
  const muted = mutedUntil !== null && mutedUntil.getTime() > now.getTime()
  const until = muted ? ` (muted until ${mutedUntil!.toISOString()})` : ''
  const released = !muted && current.resolveWithheld ? current.resolveWithheld : undefined
  const keep = { resolveWithheld: released ? null : current.resolveWithheld }
  const out = (o: Omit<Outcome, 'releasedResolve'>): Outcome => (released ? { ...o, releasedResolve: released } : o)
  if (s.event === 'fired') {
    if (!muted)
      return out({ next: { ...s.next, incidentMuted: false, ...keep }, deliver: 'fired', record: { event: 'fired', detail: null } })
    // Not notified, and the cooldown is not restarted by a fire nobody received.
    return out({
      next: { ...s.next, incidentNotified: false, lastNotifiedAt: current.lastNotifiedAt, incidentMuted: true, ...keep },
      record: { event: 'muted', detail: `fire withheld${until}; delivered if the breach lasts past the mute` },
    })
  }
  if (s.event === 'resolved') {
    if (!muted)
      return out({ next: { ...s.next, incidentMuted: false, ...keep }, deliver: 'resolved', record: { event: 'resolved', detail: null } })
    return {
      next: { ...s.next, incidentMuted: false, resolveWithheld: current.incidentId },
      record: { event: 'muted', detail: `resolve withheld${until}; delivered when the mute ends` },
    }
  }
  if (current.state === 'ok' && s.next.state === 'firing') {
    return out({
      next: { ...s.next, incidentMuted: false, ...keep },
      record: { event: 'suppressed', detail: 'fire held back by the cooldown' },
    })
  }
  if (current.state === 'firing' && s.next.state === 'ok') {
    const why = current.incidentMuted ? 'its fire was withheld by a mute' : 'its fire was held back by the cooldown'
    return out({ next: { ...s.next, incidentMuted: false, ...keep }, record: { event: 'resolved', detail: `not delivered: ${why}` } })
  }
  if (s.next.state === 'firing' && current.incidentMuted && !muted) {
    return out({
      next: { ...s.next, incidentNotified: true, lastNotifiedAt: now, incidentMuted: false, ...keep },
      deliver: 'fired',
      record: { event: 'fired', detail: 'the breach outlasted the mute: delivered when it ended' },
    })
  }
  if (released) return out({ next: { ...s.next, incidentMuted: current.incidentMuted, ...keep } })
  return {
    next: s.next === current ? current : { ...s.next, incidentMuted: current.incidentMuted, resolveWithheld: current.resolveWithheld },
  }
}
