// The labelled correlation set of `npm run bench:analytics`:
// seeded hourly series over two weeks (the span the user had written), in groups of a target and the stats that
// truly move with it, among stats that do not. Related: shared spikes (three
// stats with the same two spikes), a shared trend, a copy two hours late.
// Unrelated: independent noise on the same daily cycle (some with spikes of
// their own). Every method of GET /api/v1/correlations is scored on it with
// the route's own code (bestLag after the default diff transform): target,
// every related pair in its target's top 3, every unrelated pair below 0.3 in
// absolute value.
import { bestLag, diff, type Method } from '../shared/analytics/correlations.js'
import { CORRELATION_METHODS } from '../shared/analytics/schema.js'

export const CORR_SET_TARGET = { topK: 3, unrelatedBelow: 0.3 } as const
/** The lag the set is scored at: the lagged copy is two hours late. */
export const CORR_SET_MAX_LAG = 3

type Series = Array<number | null>

function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

export interface LabelledSet {
  stats: Map<string, Series>
  /** [target, other, kind of relation] */
  related: Array<[string, string, string]>
  targets: string[]
}

/** One seeded set: `hours` hourly values per stat, starting at midnight UTC. */
export function labelledSet(seed: number, hours = 14 * 24, unrelated = 20): LabelledSet {
  const r = rng(seed)
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
  // The daily cycle every stat shares: quiet at night, busy mid-afternoon, 2.5x from trough to peak.
  const cycle = (h: number) => 0.4 + 0.6 * Math.sin((Math.PI * ((h % 24) + 18)) / 24) ** 2
  /** A counter-like stat: level x cycle plus noise of about its square root. */
  const base = (level: number) => Array.from({ length: hours }, (_, h) => level * cycle(h) + Math.sqrt(level) * gauss())
  const at = () => 24 + Math.floor(r() * (hours - 48))
  const stats = new Map<string, Series>()
  const round = (xs: number[]) => xs.map((x) => Math.max(0, Math.round(x)))

  // Shared spikes: three stats spike in the same hours (two events, one of them two hours long).
  const spikes = [at(), at()]
  const spiked = (level: number, size: number) => {
    const xs = base(level)
    for (const [k, h] of spikes.entries()) for (let j = 0; j < (k ? 2 : 1); j++) xs[h + j] += size * Math.sqrt(level) * (0.7 + 0.6 * r())
    return round(xs)
  }
  stats.set('spike.target', spiked(400, 8))
  stats.set('spike.partner', spiked(100, 6))
  stats.set('spike.third', spiked(25, 10))

  // A shared trend: a random walk both follow (the partner at a quarter of the size) under their own noise.
  // Its hourly steps are about the size of each stat's own noise.
  let walk = 0
  const trend = Array.from({ length: hours }, () => (walk += gauss()))
  stats.set('trend.target', round(base(300).map((x, h) => x + 1.2 * Math.sqrt(300) * (trend[h] + 30))))
  stats.set('trend.partner', round(base(80).map((x, h) => x + 1.2 * Math.sqrt(80) * (trend[h] + 30))))

  // A lagged copy: the partner is the target two hours earlier, with a little noise of its own.
  const lead = base(200)
  stats.set('lag.partner', round(lead))
  stats.set('lag.target', round(lead.map((_, h) => (h >= 2 ? lead[h - 2] : lead[0]) + 0.3 * Math.sqrt(200) * gauss())))

  // Unrelated: the same daily cycle, independent noise; every fourth has a spike of its own.
  // Their spikes stay three hours clear of the shared ones: a spike in the same hour is a co-spike, not noise.
  const clear = () => {
    for (;;) {
      const h = at()
      if (spikes.every((s) => Math.abs(h - s) > 3)) return h
    }
  }
  for (let i = 0; i < unrelated; i++) {
    const level = [30, 100, 300, 1000][i % 4]
    const xs = base(level)
    if (i % 4 === 3) xs[clear()] += 8 * Math.sqrt(level)
    stats.set(`noise.${String(i).padStart(2, '0')}`, round(xs))
  }
  return {
    stats,
    targets: ['spike.target', 'trend.target', 'lag.target'],
    related: [
      ['spike.target', 'spike.partner', 'shared spikes'],
      ['spike.target', 'spike.third', 'shared spikes'],
      ['trend.target', 'trend.partner', 'shared trend'],
      ['lag.target', 'lag.partner', 'lagged copy (2 h)'],
    ],
  }
}

export interface MethodScore {
  method: Method
  related: number
  relatedInTop: number
  /** Related pairs: the lowest |coefficient| and the worst rank. */
  relatedMinAbs: number
  worstRank: number
  unrelated: number
  unrelatedOver: number
  unrelatedMaxAbs: number
  misses: string[]
}

/** Scores every method on `seeds` sets: ranks of the related pairs, sizes of the unrelated ones. */
export function scoreCorrelationSet(seeds: number[], maxLag = CORR_SET_MAX_LAG): MethodScore[] {
  const sets = seeds.map((s) => labelledSet(s))
  return CORRELATION_METHODS.map((method) => {
    const out: MethodScore = {
      method,
      related: 0,
      relatedInTop: 0,
      relatedMinAbs: 1,
      worstRank: 0,
      unrelated: 0,
      unrelatedOver: 0,
      unrelatedMaxAbs: 0,
      misses: [],
    }
    sets.forEach((set, k) => {
      const diffs = new Map([...set.stats].map(([n, v]) => [n, diff(v)]))
      for (const target of set.targets) {
        const scores = [...diffs]
          .filter(([n]) => n !== target)
          .map(([n, v]) => {
            const verdict = bestLag(diffs.get(target)!, v, method, maxLag)
            return { n, c: 'coefficient' in verdict ? verdict.coefficient : 0 }
          })
          .sort((a, b) => Math.abs(b.c) - Math.abs(a.c))
        const related = new Set(set.related.filter(([t]) => t === target).map(([, o]) => o))
        for (const [i, s] of scores.entries()) {
          if (related.has(s.n)) {
            out.related++
            out.relatedMinAbs = Math.min(out.relatedMinAbs, Math.abs(s.c))
            out.worstRank = Math.max(out.worstRank, i + 1)
            if (i < CORR_SET_TARGET.topK) out.relatedInTop++
            else out.misses.push(`seed ${seeds[k]}: ${target} ~ ${s.n} ranked ${i + 1} (${s.c.toFixed(3)})`)
          } else if (!s.n.startsWith(target.split('.')[0])) {
            out.unrelated++
            out.unrelatedMaxAbs = Math.max(out.unrelatedMaxAbs, Math.abs(s.c))
            if (Math.abs(s.c) >= CORR_SET_TARGET.unrelatedBelow) {
              out.unrelatedOver++
              out.misses.push(`seed ${seeds[k]}: ${target} ~ ${s.n} (unrelated) ${s.c.toFixed(3)}`)
            }
          }
        }
      }
    })
    return out
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const s of scoreCorrelationSet([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])) console.log(JSON.stringify({ ...s, misses: s.misses.slice(0, 6) }))
}
