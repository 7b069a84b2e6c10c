// The stat as the API shows it: kept apart from repo.ts, which holds the rows and their queries.
import type { Stat } from './repo.js'

/** The public JSON form of a stat. */
export function statJson(s: Stat & { lastPointAt?: Date | null; series?: number }) {
  return {
    id: s.id,
    name: s.name,
    kind: s.kind,
    description: s.description,
    unit: s.unit,
    higher_is: s.higherIs,
    created_at: s.createdAt.toISOString(),
    ...(s.lastPointAt !== undefined ? { last_point_at: s.lastPointAt?.toISOString() ?? null } : {}),
    ...(s.series !== undefined ? { series: s.series } : {}),
  }
}
