// The rules of docs/decisions.md §I-3.2, as pure functions: whether a condition holds
// for an observation, and how an alert's state moves on each evaluation.
import { randomUUID } from 'node:crypto'
import type { Condition } from './schema.js'

export interface Rule {
  condition: Condition
  threshold: number
  windowMinutes: number
  direction: 'above' | 'below'
  cooldownMinutes: number
}

export interface Observation {
  /** above/below/sustained: the value over the last minute; pct_change: the same now; heartbeat/missing_data: seconds since the last point. */
  value: number | null
  /** pct_change: the value `windowMinutes` ago. */
  previous: number | null
  /** anomaly: whether the stat's latest anomaly incident since the alert was created is open (null: there is none). */
  open?: boolean | null
}

/**
 * Whether the condition holds right now; null when the data cannot tell
 * (a gauge with no recent reading, a percentage from zero), which leaves the
 * alert as it is. Exactly at the threshold never holds.
 */
export function conditionHolds(rule: Rule, obs: Observation): boolean | null {
  const { value, previous } = obs
  switch (rule.condition) {
    case 'above':
      return value === null ? null : value > rule.threshold
    case 'below':
      return value === null ? null : value < rule.threshold
    case 'sustained':
      return value === null ? false : rule.direction === 'above' ? value > rule.threshold : value < rule.threshold
    case 'pct_change': {
      if (value === null || previous === null || previous === 0) return null
      const pct = ((value - previous) / Math.abs(previous)) * 100
      return rule.threshold >= 0 ? pct > rule.threshold : pct < rule.threshold
    }
    case 'heartbeat':
    case 'missing_data':
      return value === null ? null : value > rule.windowMinutes * 60
    case 'anomaly':
      return obs.open === true
  }
}

export interface AlertState {
  state: 'ok' | 'firing'
  incidentId: string | null
  incidentNotified: boolean
  lastNotifiedAt: Date | null
  conditionSince: Date | null
}

export interface Step {
  next: AlertState
  /** A delivery to queue, if any. */
  event?: 'fired' | 'resolved'
}

/**
 * One evaluation: fire on the transition into breach only; while firing
 * nothing new is sent; on recovery a resolve goes out with the same incident,
 * but only if the fire was notified. The cooldown suppresses repeat fires only.
 */
export function step(rule: Rule, current: AlertState, holds: boolean | null, now: Date): Step {
  if (holds === null) return { next: current }
  const conditionSince = holds ? (current.conditionSince ?? now) : null
  const breach = rule.condition === 'sustained' ? holds && now.getTime() - conditionSince!.getTime() >= rule.windowMinutes * 60_000 : holds
  if (breach && current.state === 'ok') {
    const cooling = current.lastNotifiedAt !== null && now.getTime() - current.lastNotifiedAt.getTime() < rule.cooldownMinutes * 60_000
    return {
      next: {
        state: 'firing',
        incidentId: randomUUID(),
        incidentNotified: !cooling,
        lastNotifiedAt: cooling ? current.lastNotifiedAt : now,
        conditionSince,
      },
      event: cooling ? undefined : 'fired',
    }
  }
  if (!breach && current.state === 'firing') {
    return {
      next: { state: 'ok', incidentId: null, incidentNotified: false, lastNotifiedAt: current.lastNotifiedAt, conditionSince },
      event: current.incidentNotified ? 'resolved' : undefined,
    }
  }
  // Unchanged: the same object back (a back-test steps through tens of thousands of quiet minutes).
  return { next: conditionSince === current.conditionSince ? current : { ...current, conditionSince } }
}
