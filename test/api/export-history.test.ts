// An export of full history costs what its points cost. Every point of stats held as hot rows
// only, day blocks only, both, and with gaps of hundreds of empty days is exported once and in order (over HTTP,
// 800 days of history on the business plan); and the statements one stat's export sends do not grow with the
// empty days around its points (counted on a real connection by postgres.js' debug hook: no timing here; the
// timings are in bench:reads).
import test from 'ava'
import postgres from 'postgres'
import type { Sql } from '../../shared/db.js'
import { pagedRows } from '../../shared/export/stream.js'
import type { ExportWindow } from '../../shared/export/window.js'
import { compactDay } from '../../shared/points/compaction.js'
import type { Stat } from '../../shared/stats/repo.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite()
let key: string
let accountId: string
test.before(async () => {
  const user = await signUp(app.url)
  accountId = user.accountId
  await app.sql`update accounts set plan = 'business' where id = ${accountId}`
  ;({ key } = await createKey(app.url, user))
})

const DAY = 86_400
const TODAY = Math.floor(Date.now() / 1000 / DAY) * DAY
/** Second `s` of the UTC day `daysAgo` days before today. */
const at = (daysAgo: number, s: number) => TODAY - daysAgo * DAY + s

async function gauge(name: string): Promise<Stat> {
  const [s] = await app.sql<Stat[]>`insert into stats (account_id, name, kind) values (${accountId}, ${name}, 'gauge') returning *`
  return s
}
async function rows(stat: Stat, points: Array<[number, number]>): Promise<void> {
  await app.sql`insert into points (stat_id, ts, value)
    select ${stat.id}, to_timestamp(t), v from unnest(${points.map((p) => p[0])}::float8[], ${points.map((p) => p[1])}::float8[]) as u(t, v)`
}
/** Moves the stat's hot rows of those days into day blocks (what the compaction worker does past yesterday). */
async function compact(stat: Stat, ...daysAgo: number[]): Promise<void> {
  for (const d of daysAgo)
    if (!(await compactDay(app.sql, stat.id, new Date(at(d, 0) * 1000)))) throw new Error(`nothing compacted ${d} days ago`)
}
const series = (daysAgo: number, n: number, every: number, v0: number): Array<[number, number]> =>
  Array.from({ length: n }, (_, i) => [at(daysAgo, 100 + i * every), v0 + i])

test.serial('full history: every point of rows-only, blocks-only and mixed stats with long gaps, once and in order', async (t) => {
  const want = new Map<string, Array<[number, number]>>()
  const add = (name: string, points: Array<[number, number]>) => want.set(name, [...(want.get(name) ?? []), ...points])

  const rowsOnly = await gauge('h.rows')
  // Days 790 and 789, then nothing until day 12, then today: with ties (three points on one second).
  const r = [
    ...series(790, 5, 60, 1),
    ...series(789, 3, 1, 10),
    [at(789, 100), 99] as [number, number],
    ...series(12, 4, 3600, 20),
    ...series(0, 2, 1, 30),
  ]
  await rows(rowsOnly, r)
  add('h.rows', r)

  const blocksOnly = await gauge('h.blocks')
  const b = [...series(700, 50, 30, 100), ...series(350, 1, 1, 200), ...series(3, 20, 600, 300)]
  await rows(blocksOnly, b)
  await compact(blocksOnly, 700, 350, 3)
  add('h.blocks', b)

  const mixed = await gauge('h.mixed')
  // Day 500: a block, then a backfill of the same day (before, inside and after the block's span) not compacted yet.
  const m1 = series(500, 10, 60, 400)
  await rows(mixed, m1)
  await compact(mixed, 500)
  const m2: Array<[number, number]> = [
    [at(500, 10), 450],
    [at(500, 100 + 60 * 4), 451],
    [at(500, 80_000), 452],
  ]
  // Day 240: hot rows only; day 30: a block only; yesterday: hot rows only.
  const m3 = [...series(240, 7, 1, 500), ...series(30, 6, 900, 600), ...series(1, 3, 3, 700)]
  await rows(mixed, [...m2, ...m3])
  await compact(mixed, 30)
  add('h.mixed', [...m1, ...m2, ...m3])

  // A stat with one point at the far end of history, and one with none at all.
  const lone = await gauge('h.lone')
  await rows(lone, [[at(799, 0), 7]])
  add('h.lone', [[at(799, 0), 7]])
  await gauge('h.none')

  const [{ blocks, hot }] = await app.sql<{ blocks: number; hot: number }[]>`
    select (select count(*) from point_blocks where stat_id in (${blocksOnly.id}, ${mixed.id}))::int as blocks,
           (select count(*) from points where stat_id = ${blocksOnly.id})::int as hot`
  t.is(blocks, 5, 'the blocks-only stat and the mixed stat hold day blocks')
  t.is(hot, 0, 'the blocks-only stat holds no hot rows')

  for (const format of ['csv', 'json'] as const) {
    const res = await request(app.url, `/api/v1/export?format=${format}`, { bearer: key })
    t.is(res.status, 200)
    const got = new Map<string, Array<[number, number]>>()
    if (format === 'csv') {
      const lines = res.text.trimEnd().split('\n').slice(1, -1)
      for (const l of lines) {
        const [name, , ts, , v] = l.split(',')
        got.set(name, [...(got.get(name) ?? []), [Number(ts), Number(v)]])
      }
    } else {
      const body = typeof res.body === 'string' ? JSON.parse(res.body) : res.body
      t.deepEqual(
        body.stats.map((s: { name: string }) => s.name),
        ['h.blocks', 'h.lone', 'h.mixed', 'h.none', 'h.rows'],
        'every stat, by name',
      )
      for (const s of body.stats)
        if (s.points.length)
          got.set(
            s.name,
            s.points.map((p: { t: number; value: number }) => [p.t, p.value]),
          )
    }
    t.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), format)
    for (const [name, points] of want) {
      const g = got.get(name)!
      t.true(
        g.every((p, i) => i === 0 || g[i - 1][0] <= p[0]),
        `${format} ${name}: by time`,
      )
      // Ties of one second come in any order: compare as sorted lists, so a point twice or missing shows.
      const sorted = (ps: Array<[number, number]>) => ps.map(([ts, v]) => `${ts}:${v}`).sort()
      t.deepEqual(sorted(g), sorted(points), `${format} ${name}: every point once`)
    }
  }
})

/** The statements one stat's export sends, on a connection of its own that counts them. */
async function statementsOf(stat: Stat, fromDaysAgo: number, pageRows = 10_000): Promise<{ statements: number; points: number }> {
  let statements = 0
  const counted = postgres(app.config.databaseUrl, {
    max: 1,
    onnotice: () => {},
    debug: () => {
      statements++
    },
  }) as unknown as Sql
  try {
    // Connected first: the connection's own type look-up is not the export's.
    await counted`select 1`
    statements = 0
    const w: ExportWindow = {
      requested: 'custom',
      from: new Date(at(fromDaysAgo, 0) * 1000),
      to: new Date(),
      retentionDays: 800,
      clamped: false,
    }
    let points = 0
    for await (const page of pagedRows(counted, stat, w, pageRows)) points += page.length
    return { statements, points }
  } finally {
    await counted.end({ timeout: 1 })
  }
}

test.serial('the statements of an export do not grow with the empty days around its points', async (t) => {
  // One point, in hot rows and in a block, read from the day before it and from 790 days before it.
  const hot = await gauge('c.hot')
  await rows(hot, [[at(5, 50), 1]])
  const block = await gauge('c.block')
  await rows(block, [[at(5, 50), 1]])
  await compact(block, 5)
  for (const s of [hot, block]) {
    const near = await statementsOf(s, 6)
    const far = await statementsOf(s, 795)
    t.is(near.points, 1)
    t.is(far.points, 1)
    t.is(far.statements, near.statements, `${s.name}: 790 empty days before the point cost no statement`)
    t.true(near.statements <= 4, `${s.name}: ${near.statements} statements for one point`)
  }
  // Two days of points, adjacent or 600 days apart; a stat with no point at all.
  const close = await gauge('c.close')
  await rows(close, [
    [at(11, 50), 1],
    [at(10, 50), 2],
  ])
  const apart = await gauge('c.apart')
  await rows(apart, [
    [at(610, 50), 1],
    [at(10, 50), 2],
  ])
  const a = await statementsOf(close, 795)
  const b = await statementsOf(apart, 795)
  t.is(a.points, 2)
  t.is(b.points, 2)
  t.is(b.statements, a.statements, '600 empty days between two points cost no statement')
  const none = await statementsOf(await gauge('c.none'), 795)
  t.deepEqual(none, { statements: 1, points: 0 }, 'a stat without points: one statement')
  // Pages inside one day of hot rows: each page is a step of its own (a probe for blocks, then the page).
  const dense = await gauge('c.dense')
  await rows(dense, series(2, 2_500, 1, 0))
  const paged = await statementsOf(dense, 795, 1000)
  t.is(paged.points, 2_500)
  t.true(paged.statements <= 3 * 3 + 1, `${paged.statements} statements for 3 pages`)
})
