// The worker's block encoder (shared/points/blocks.ts) against PostgreSQL's point_block_encode
// (sql/0027): a write block must be the block the compaction would have written from the same
// points, byte for byte, or the two readers of blocks could disagree. Real PostgreSQL.
import test from 'ava'
import fc from 'fast-check'
import { decodeBlock, encodeBlock, mergePoints, pointsOfRows, roundHalfEven, rowsOfPoints } from '../../shared/points/blocks.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let app: TestApp
test.before(async () => {
  app = await startTestApp()
})
test.after.always(() => app?.close())

const DAY = 86_400
const day = Math.floor(Date.now() / 1000 / DAY) * DAY - 30 * DAY

/** Values of every form a block meets: two-decimal gauges, counters, scaled past 2^53, raw doubles, signed zeros. */
const value = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((x) => x / 100),
  fc.integer({ min: 0, max: 50 }),
  fc.double({ min: -1e15, max: 1e15, noNaN: true, noDefaultInfinity: true }),
  fc.tuple(fc.integer({ min: -999_999_999_999, max: 999_999_999_999 }), fc.integer({ min: 0, max: 6 })).map(([x, k]) => x / 10 ** k),
  fc.constantFrom(0, -0, 0.1 + 0.2, 5e-324, 1e300, -999999999999.5, 2.5, -3.5, 5e11 + 0.0625, -(4e11 + 0.0125)),
)
const block = fc.array(fc.tuple(fc.integer({ min: 0, max: DAY - 1 }), value), { minLength: 1, maxLength: 40 })

test('encodeBlock writes what point_block_encode writes, for points in any order, equal times and values of every form', async (t) => {
  // Random blocks, and one that is certain to take the BigInt path (scaled by 10^4 past 2^52).
  const cases = [
    ...fc.sample(block, 300),
    [
      [20, 5e11 + 0.0625],
      [10, 1.5],
      [30, -(4e11 + 0.0125)],
    ] as Array<[number, number]>,
  ]
  const ts = cases.map((c) => c.map(([s]) => day + s))
  const vs = cases.map((c) => c.map(([, v]) => v))
  // One statement for all cases: each case's arrays as JSON, encoded by PostgreSQL in the given order.
  const rows = await app.sql<
    Array<{
      i: number
      n: number
      first: number
      last: number
      dts: number[]
      scale: number | null
      ivals: string[] | null
      fvals: number[] | null
    }>
  >`
    select c.i, e.n, extract(epoch from e.first_ts)::int as first, extract(epoch from e.last_ts)::int as last, e.dts, e.scale, e.ivals, e.fvals
    from json_array_elements(${JSON.stringify(cases.map((_, i) => ({ ts: ts[i], vs: vs[i].map((v) => (Object.is(v, -0) ? '-0' : String(v))) })))}::text::json) with ordinality as c(j, i)
    cross join lateral point_block_encode(${new Date(day * 1000)},
      (select array_agg(to_timestamp(x::float8) order by o) from json_array_elements_text(c.j -> 'ts') with ordinality as u(x, o)),
      (select array_agg(x::float8 order by o) from json_array_elements_text(c.j -> 'vs') with ordinality as u(x, o))) e
    order by c.i`
  t.is(rows.length, cases.length)
  let big = 0
  for (const r of rows) {
    const i = r.i - 1
    const mine = encodeBlock(day, ts[i], vs[i])
    const ours = {
      n: mine.n,
      first: mine.first,
      last: mine.last,
      dts: mine.dts,
      scale: mine.scale,
      ivals: mine.ivals?.map(String) ?? null,
      fvals: mine.fvals,
    }
    t.deepEqual(
      ours,
      { n: r.n, first: r.first, last: r.last, dts: r.dts, scale: r.scale, ivals: r.ivals?.map(String) ?? null, fvals: r.fvals },
      JSON.stringify(cases[i]),
    )
    if (mine.ivals?.some((x) => typeof x === 'bigint')) big++
    // And it decodes to the points sorted by time, every value exact.
    const decoded = decodeBlock({ day: new Date(day * 1000), dts: mine.dts, scale: mine.scale, ivals: mine.ivals, fvals: mine.fvals })
    const sorted = ts[i].map((s, k) => [s, vs[i][k]] as const).sort((a, b) => a[0] - b[0])
    t.deepEqual(
      decoded.map((d) => [Number(d.us) / 1e6, d.value || 0]),
      sorted.map(([s, v]) => [s, v || 0]),
    )
  }
  t.true(big > 0, 'some cases were scaled past 2^52 (the BigInt path)')
})

test('mergePoints gives the runs in time order, equal times in the order of their runs, whether the runs overlap or follow one another', (t) => {
  // Rows tagged with their run so that the order among equal times is visible; a stable sort of the runs laid end
  // to end is the answer. Runs drawn from a narrow range of times overlap and share times; runs drawn apart follow
  // one another (the joined-as-they-are path), sometimes touching at one time.
  const runs = (spread: number) =>
    fc
      .array(
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 25 }).map((ts) => ts.sort((a, b) => a - b)),
        { maxLength: 12 },
      )
      .map((rs) => rs.map((ts, k) => ts.map((s, i) => ({ us: String((s + k * spread) * 1_000_000), value: k * 1000 + i }))))
  fc.assert(
    fc.property(fc.oneof(runs(0), runs(30), runs(31)), (rs) => {
      const expected = rs.flat().sort((a, b) => Number(a.us) - Number(b.us))
      t.deepEqual(rowsOfPoints(mergePoints(rs.map(pointsOfRows))), expected)
    }),
    { numRuns: 500 },
  )
})

test('encodeBlock scales a value whose scaled product is a tie as PostgreSQL does (ties to even)', async (t) => {
  // 4434608397.43 * 10^6 is 4434608397430000.5: PostgreSQL rounds it to ...000, which gives the value back, so it
  // scales by 10^6; rounding the tie upwards gave ...001 and raw doubles, a different block for the same points.
  const points: Array<[number, number]> = [
    [20, 515695.038006],
    [40, 4434608397.43],
    [60, -2.5],
  ]
  const [row] = await app.sql<{ scale: number | null; ivals: string[] | null }[]>`
    select scale, ivals from point_block_encode(${new Date(day * 1000)},
      array(select to_timestamp(x) from unnest(${points.map(([s]) => day + s)}::float8[]) with ordinality u(x, o) order by o),
      ${points.map(([, v]) => v)}::float8[])`
  const mine = encodeBlock(
    day,
    points.map(([s]) => day + s),
    points.map(([, v]) => v),
  )
  t.is(row.scale, 1e6)
  t.deepEqual({ scale: mine.scale, ivals: mine.ivals?.map(String) ?? null }, { scale: row.scale, ivals: row.ivals?.map(String) ?? null })
  t.deepEqual([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.2, -3.7].map(roundHalfEven), [-2, -2, 0, 0, 2, 2, 3, -4])
})
