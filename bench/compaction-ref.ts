// What compacting a backfill costs PostgreSQL per point, from write blocks and from rows: bench:persist's
// compaction figure, and bench:hotwindow's same-run reference for the hot window's steady state (moving rows
// into blocks a whole day at a time, the cheapest a point can leave the hot table).
import { randomUUID } from 'node:crypto'
import type { Sql } from '../shared/db.js'
import type { QueuedPoint } from '../shared/jobs.js'
import { compactDay } from '../shared/points/compaction.js'
import { applyBatches, type Batch } from '../shared/points/repo.js'
import { processCpuMs } from './machine.js'

/** CPU (ms) of every backend connected to the current database (PostgreSQL must run on this machine), or of one application's. */
export async function backendCpuMs(sql: Sql, applicationName?: string): Promise<number> {
  const pids = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database()
      and (${applicationName ?? null}::text is null or application_name = ${applicationName ?? null})`
  return processCpuMs(pids.map((r) => r.pid))
}

export interface Side {
  pgUsPerPoint: number
  nodeUsPerPoint: number
  wallUsPerPoint: number
}

export async function measure(sql: Sql, points: number, run: () => Promise<void>): Promise<Side> {
  const pg0 = await backendCpuMs(sql)
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  await run()
  const wall = performance.now() - wall0
  const cpu = process.cpuUsage(cpu0)
  const pg = (await backendCpuMs(sql)) - pg0
  return { pgUsPerPoint: (pg * 1000) / points, nodeUsPerPoint: (cpu.user + cpu.system) / points, wallUsPerPoint: (wall * 1000) / points }
}

/**
 * Whole days of a gauge every 10 s (8,640 points a day), stored once as write blocks (jobs of 1,000 points, groups
 * of 16, as 1,000-point requests give) and once as rows of other stats, then each set's days merged into their day
 * blocks alone. Days 22 to 27 back (`daysBack` moves them): apart from the callers' own days.
 */
export async function compactionCost(
  sql: Sql,
  accountId: string,
  opts: { sides?: Array<'blocks' | 'rows'>; daysBack?: number } = {},
): Promise<{ points: number; blocks: Side; rows: Side }> {
  const STATS_PER_SIDE = 6
  const DAYS = 6
  const sides = opts.sides ?? ['blocks', 'rows']
  const ids = (
    await sql<{ id: string }[]>`
    insert into stats (account_id, name, kind)
    select ${accountId}, 'compaction.ref.' || ${randomUUID()} || '.' || g, 'gauge' from generate_series(1, ${2 * STATS_PER_SIDE}) g returning id`
  ).map((r) => r.id)
  const today = Math.floor(Date.now() / 1000 / 86_400) * 86_400
  const days = Array.from({ length: DAYS }, (_, d) => today - ((opts.daysBack ?? 22) + d) * 86_400)
  const dayOf = (stat: string, day: number): QueuedPoint[] =>
    Array.from({ length: 8_640 }, (_, i) => [
      stat,
      day + i * 10,
      Math.round((50 + 20 * Math.sin(i / 500) + ((i * 7919) % 100) / 100) * 100) / 100,
      null,
    ])
  const [asBlocks, asRows] = [ids.slice(0, STATS_PER_SIDE), ids.slice(STATS_PER_SIDE)]
  if (sides.includes('blocks'))
    for (const stat of asBlocks)
      for (const day of days) {
        const points = dayOf(stat, day)
        const jobs: Batch[] = []
        for (let i = 0; i < points.length; i += 1000) jobs.push({ id: randomUUID(), points: points.slice(i, i + 1000) })
        for (let i = 0; i < jobs.length; i += 16) await applyBatches(sql, jobs.slice(i, i + 16))
      }
  if (sides.includes('rows'))
    for (const stat of asRows)
      for (const day of days) {
        const points = dayOf(stat, day)
        await sql`insert into points (stat_id, ts, value) select ${stat}, to_timestamp(t), v from unnest(${points.map((p) => p[1])}::bigint[], ${points.map((p) => p[2])}::float8[]) as u(t, v)`
      }
  const points = STATS_PER_SIDE * DAYS * 8_640
  const none: Side = { pgUsPerPoint: Number.NaN, nodeUsPerPoint: Number.NaN, wallUsPerPoint: Number.NaN }
  const compact = (stats: string[]) =>
    measure(sql, points, async () => {
      for (const stat of stats) for (const day of days) await compactDay(sql, stat, new Date(day * 1000))
    })
  const blocks = sides.includes('blocks') ? await compact(asBlocks) : none
  const rows = sides.includes('rows') ? await compact(asRows) : none
  return { points, blocks, rows }
}
