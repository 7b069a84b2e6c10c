// The caller's stat named in a URL, or the 404 every stat route answers.
import { notFound } from '../shared/errors.js'
import { findStatByRawName, type Stat } from '../shared/stats/repo.js'
import { accountOf, type Ctx } from './context.js'

export async function statFromParam(ctx: Ctx, raw: string): Promise<Stat> {
  const stat = await findStatByRawName(ctx.deps.sql, accountOf(ctx).id, raw)
  if (!stat) throw noSuchStat()
  return stat
}

/** The 404 of a stat the caller does not have. */
export const noSuchStat = () => notFound('stat', 'stat_not_found')
