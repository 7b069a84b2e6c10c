// The plan table of docs/decisions.md §5, in one place. Enforcement reads
// these values; nothing else hard-codes a limit.

export const PLAN_NAMES = ['free', 'starter', 'pro', 'business'] as const
export type PlanName = (typeof PLAN_NAMES)[number]
export const PAID_PLANS = ['starter', 'pro', 'business'] as const satisfies readonly PlanName[]

export interface Plan {
  name: PlanName
  priceUsdPerMonth: number
  trackedStats: number
  pointsPerDay: number
  retentionDays: number
  alerts: number
  anomalyDetection: boolean
  requestsPerSecond: number
  burst: number
}

export const PLANS: Readonly<Record<PlanName, Readonly<Plan>>> = Object.freeze({
  free: {
    name: 'free',
    priceUsdPerMonth: 0,
    trackedStats: 10,
    pointsPerDay: 100_000,
    retentionDays: 30,
    alerts: 2,
    anomalyDetection: false,
    requestsPerSecond: 20,
    burst: 100,
  },
  starter: {
    name: 'starter',
    priceUsdPerMonth: 9,
    trackedStats: 100,
    pointsPerDay: 1_000_000,
    retentionDays: 180,
    alerts: 20,
    anomalyDetection: true,
    requestsPerSecond: 100,
    burst: 500,
  },
  pro: {
    name: 'pro',
    priceUsdPerMonth: 29,
    trackedStats: 1_000,
    pointsPerDay: 10_000_000,
    retentionDays: 400,
    alerts: 100,
    anomalyDetection: true,
    requestsPerSecond: 500,
    burst: 2_500,
  },
  business: {
    name: 'business',
    priceUsdPerMonth: 99,
    trackedStats: 10_000,
    pointsPerDay: 100_000_000,
    retentionDays: 800,
    alerts: 1_000,
    anomalyDetection: true,
    requestsPerSecond: 2_000,
    burst: 10_000,
  },
})

/** Looks up a plan by name; unknown names are a programming error. */
export function planOf(name: string): Readonly<Plan> {
  const plan = PLANS[name as PlanName]
  if (!plan) throw new Error(`unknown plan ${name}`)
  return plan
}

export function isPlanName(name: string): name is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(name)
}

/** Alerts each plan evaluates, as JSON for SQL: alerts past this count (the newest) are paused, never deleted. */
export const ALERT_ALLOWANCES_JSON = JSON.stringify(Object.fromEntries(PLAN_NAMES.map((n) => [n, PLANS[n].alerts])))

/** The plans whose stats the anomaly sweep scores. */
export const DETECTING_PLANS = Object.values(PLANS)
  .filter((p) => p.anomalyDetection)
  .map((p) => p.name)
