// The compaction's passes look for work only when it may be there (docs/decisions.md §27, sql/0049): a process's pass
// at the edge it last checked, with no write marked behind that edge since, skips; every write path that can put
// rows or blocks behind an edge (the persist statement's rows and write blocks, keyed points, the refused-batch
// path, imports) marks it in its own statement, and the next pass then moves them. Real PostgreSQL; no workers, so
// no scheduled pass takes the marks while a test counts them.
import test from 'ava'
import { storeChunk } from '../../shared/imports/store.js'
import { MIN_HOT_WINDOW_MINUTES } from '../../shared/config.js'
import { behindEdge, compactionPasses, hotEdge } from '../../shared/points/compaction.js'
import { applyBatches, applyIsolating } from '../../shared/points/repo.js'
import { signUp } from '../helpers/factories.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite()

const HOUR = 3600
const NOW = Math.floor(Date.now() / 1000)
const at = (t: number) => new Date(t * 1000)
const WINDOW = 60
const EDGE = hotEdge(at(NOW), WINDOW).getTime() / 1000
let batchNo = 0
const batch = (points: Array<[string, number, number, string | null]>) => ({ id: `marks-${batchNo++}`, points })

async function gauges(n: number): Promise<string[]> {
  const user = await signUp(app.url)
  const rows = await app.sql<{ id: string }[]>`
    insert into stats (account_id, name, kind) select ${user.accountId}, 'marks.' || i, 'gauge' from generate_series(1, ${n}) i returning id`
  return rows.map((r) => r.id)
}
const marks = async () => (await app.sql<{ n: number }[]>`select count(*)::int as n from compaction_marks`)[0].n
const rowsBehind = async (id: string, edge = EDGE) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from points where stat_id = ${id} and ts < ${at(edge)}`)[0].n
const packed = async (id: string) =>
  (await app.sql<{ n: number }[]>`select coalesce(sum(n), 0)::int as n from point_blocks where stat_id = ${id}`)[0].n

test.serial('a pass at the edge it checked skips until a write marks it or the edge moves', async (t) => {
  const [id] = await gauges(1)
  const pass = compactionPasses()
  // Three hours of history up to now: the older part is behind the edge, so the write marks it.
  const history = Array.from({ length: 36 }, (_, i): [string, number, number, null] => [id, NOW - 3 * HOUR + i * 300, i, null])
  await applyBatches(app.sql, [batch(history)])
  t.true((await marks()) >= 1, 'a write with points behind the edge leaves a mark')

  const first = await pass(app.sql, at(NOW), { hotWindowMinutes: WINDOW })
  t.falsy(first.skipped)
  t.true(first.points > 0)
  t.is(await rowsBehind(id), 0)
  t.is(await marks(), 0, 'the pass took the marks')

  // Nothing written since, same edge (the same instant: a minute on may cross the hour the edge moves at): no look.
  t.true((await pass(app.sql, at(NOW), { hotWindowMinutes: WINDOW })).skipped)

  // A live point marks nothing, and the pass still skips.
  await applyBatches(app.sql, [batch([[id, NOW, 1, null]])])
  t.is(await marks(), 0)
  t.true((await pass(app.sql, at(NOW), { hotWindowMinutes: WINDOW })).skipped)

  // A late point behind the edge: marked, and the next pass moves it.
  await applyBatches(app.sql, [batch([[id, EDGE - 600, 7.5, null]])])
  t.is(await marks(), 1)
  const late = await pass(app.sql, at(NOW), { hotWindowMinutes: WINDOW })
  t.falsy(late.skipped)
  // In the edge's own day it moves as a stretch. When the edge is a UTC midnight (from 01:00 to 02:00 with this
  // window) it is the day before's: compacted with its day and merged into the day's block, counted as both.
  const inEdgeDay = Math.floor((EDGE - 600) / 86_400) === Math.floor(EDGE / 86_400)
  t.is(late.points, inEdgeDay ? 1 : 2)
  t.is(await rowsBehind(id), 0)
  t.true((await pass(app.sql, at(NOW), { hotWindowMinutes: WINDOW })).skipped)

  // The edge moves an hour on: the pass looks without any mark.
  t.falsy((await pass(app.sql, at(NOW + HOUR), { hotWindowMinutes: WINDOW })).skipped)
  // Another process's passes (a second worker) look at their first pass whatever this one found.
  t.falsy((await compactionPasses()(app.sql, at(NOW + HOUR), { hotWindowMinutes: WINDOW })).skipped)
})

test.serial('every write path marks what may land behind an edge, and only that', async (t) => {
  const [a, b, c, d] = await gauges(4)
  const before = await marks()
  // Keyed points (the ikey statement): a live one marks nothing, a late one marks.
  await applyBatches(app.sql, [batch([[a, NOW, 1, 'k-live']])])
  t.is(await marks(), before)
  await applyBatches(app.sql, [batch([[a, NOW - 3 * HOUR, 1, 'k-late']])])
  t.is(await marks(), before + 1)
  // A write block of a past day (a batch's many points of one day before yesterday) marks, though no row is behind.
  const old = Math.floor(NOW / 86_400) * 86_400 - 5 * 86_400
  await applyBatches(app.sql, [batch(Array.from({ length: 20 }, (_, i): [string, number, number, null] => [b, old + i * 60, i, null]))])
  t.is(await marks(), before + 2)
  t.true((await packed(b)) === 20, 'the points went as a write block')
  // The refused-batch path (applyIsolating) and an import chunk.
  await applyIsolating(app.sql, batch([[c, NOW - 2 * HOUR, 3, null]]))
  t.is(await marks(), before + 3)
  await applyIsolating(app.sql, batch([[c, NOW, 3, null]]))
  t.is(await marks(), before + 3)
  await storeChunk(app.sql, 'marks-import-1', { statIds: [d], six: [1, 1], t: [NOW - 10 * 86_400, NOW], value: ['1', '2'], occ: [0, 0] })
  t.is(await marks(), before + 4)
  await storeChunk(app.sql, 'marks-import-2', { statIds: [d], six: [1], t: [NOW], value: ['3'], occ: [0] })
  t.is(await marks(), before + 4)
  // A mark is taken by the next pass, which moves what it stands for.
  const pass = compactionPasses()
  await pass(app.sql, at(NOW), { hotWindowMinutes: WINDOW })
  t.is(await marks(), 0)
  for (const id of [a, b, c, d]) t.is(await rowsBehind(id), 0)
})

test('a write is marked when it may be behind the edge of any pass within the next minutes', (t) => {
  const now = NOW * 1000
  // The shortest window's edge a few minutes ahead bounds every pass's edge.
  const bound = hotEdge(new Date(now + 5 * 60_000), MIN_HOT_WINDOW_MINUTES).getTime() / 1000
  t.true(behindEdge(bound - 1, now))
  t.false(behindEdge(bound, now))
  t.false(behindEdge(NOW, now))
  t.true(bound >= EDGE, 'a default window edge is never past the bound')
})
