// Small numeric helpers shared by the bench modules.

/** The q-quantile (0..1) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function round(x: number, digits = 0): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
