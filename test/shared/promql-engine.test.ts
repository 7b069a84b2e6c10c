// The PromQL evaluator (shared/promql/engine.ts) on hand-computed samples: rate/increase/delta with
// Prometheus' extrapolation and counter resets, the other functions, aggregations, binary operators with
// matching, and the refusals of what is outside the supported set. The series come from an in-memory
// SeriesSource: the evaluator's own seam, not the service's storage (test/api/prometheus.test.ts reads that).
import test from 'ava'
import type { Matcher } from '../../shared/promql/ast.js'
import { Arena } from '../../shared/promql/arena.js'
import { extrapolatedRate, formatValue, instantQuery, type QueryData, rangeQuery } from '../../shared/promql/engine.js'
import { PromQLError, parsePromQL } from '../../shared/promql/parse.js'
import { matches, type Labels, type Series, type SeriesSource } from '../../shared/promql/source.js'

function memorySource(data: Array<{ labels: Labels; kind?: 'counter' | 'gauge'; samples: Array<[number, number]> }>): SeriesSource {
  const series: Series[] = data.map((d, i) => ({ id: String(i), labels: d.labels, kind: d.kind ?? 'gauge' }))
  return {
    async selectSeries(_account, matchers: Matcher[]) {
      return series.filter((s) => matchers.every((m) => matches(s.labels, m)))
    },
    async readSamples(list, start, end) {
      return new Map(
        list.map((s) => {
          const kept = data[Number(s.id)].samples.filter(([t]) => t >= start && t <= end)
          return [s.id, { t: kept.map(([t]) => t), v: kept.map(([, v]) => v) }]
        }),
      )
    },
  }
}

// Samples every 15 s at 5, 20, 35, 50.
const src = memorySource([
  {
    labels: { __name__: 'c', job: 'a' },
    samples: [
      [5, 0],
      [20, 15],
      [35, 30],
      [50, 45],
    ],
  },
  {
    labels: { __name__: 'reset', job: 'a' },
    samples: [
      [5, 10],
      [20, 20],
      [35, 5],
      [50, 15],
    ],
  },
  {
    labels: { __name__: 'short', job: 'a' },
    samples: [
      [5, 0],
      [20, 15],
      [35, 30],
    ],
  },
  {
    labels: { __name__: 'g', job: 'a', host: 'x' },
    samples: [
      [5, 1],
      [20, 4],
      [35, 2],
      [50, 3],
    ],
  },
  {
    labels: { __name__: 'g', job: 'b', host: 'y' },
    samples: [
      [5, 10],
      [20, 40],
      [35, 20],
      [50, 30],
    ],
  },
  { labels: { __name__: 'g', job: 'b', host: 'z' }, samples: [[50, -2.5]] },
  { labels: { __name__: 'api.latency', job: 'a' }, samples: [[50, 7]] },
])

const vec = (d: QueryData) => {
  if (d.resultType !== 'vector') throw new Error(`not a vector: ${d.resultType}`)
  return Object.fromEntries(d.result.map((r) => [JSON.stringify(r.metric), Number(r.value[1])]))
}
const one = async (q: string, t = 60) => {
  const d = await instantQuery(src, 'acc', q, t)
  const values = Object.values(vec(d))
  if (values.length !== 1) throw new Error(`${q}: ${values.length} results`)
  return values[0]
}
const close = (t: import('ava').ExecutionContext, a: number, b: number) => t.true(Math.abs(a - b) < 1e-9, `${a} != ${b}`)

test('rate and increase extrapolate to the window edges, never below zero for a counter', async (t) => {
  // Window (0, 60]: 45 over 45 s sampled; the first sample is 5 s in but the counter was 0 there (dZero = 0),
  // the last 10 s before the end (under 1.1 x 15 s): 45 x (45 + 0 + 10) / 45 = 55.
  close(t, await one('increase(c[1m])'), 55)
  close(t, await one('rate(c[1m])'), 55 / 60)
  close(t, await one('irate(c[1m])'), 1)
})

test('a counter reset adds the value before it back', async (t) => {
  // 15 - 10 + 20 (the drop from 20 to 5) = 25; dZero = 45 x 10 / 25 = 18 > 5, so 5 s and 10 s are added: 25 x 60 / 45.
  close(t, await one('increase(reset[1m])'), (25 * 60) / 45)
  close(t, await one('rate(reset[1m])'), (25 * 60) / 45 / 60)
  // irate over a reset takes the last value as the increase: at 40 the last two are 20 then 5, so 5 / 15 s.
  close(t, await one('irate(reset[1m])', 40), 5 / 15)
  close(t, await one('irate(reset[1m])'), 10 / 15)
  // delta does not know resets: (15 - 10) x 60 / 45.
  close(t, await one('delta(reset[1m])'), (5 * 60) / 45)
})

test('a gap to the edge over 1.1 average intervals extends by half an interval only', async (t) => {
  // Last sample 25 s before the end: 30 x (30 + 0 + 7.5) / 30.
  close(t, await one('increase(short[1m])'), 37.5)
  t.is(extrapolatedRate([0], [1], -60_000, 0, 60, true, true), null, 'fewer than two samples give nothing')
})

test('windows are left-open and the lookback is 5 minutes', async (t) => {
  // At t=50 the window (-10, 50] holds all four; at t=65 a 15 s window (50, 65] holds none of c.
  close(t, await one('count_over_time(c[1m])', 50), 4)
  t.deepEqual(vec(await instantQuery(src, 'acc', 'count_over_time(c[15s])', 65)), {})
  close(t, await one('c', 50 + 299), 45)
  t.deepEqual(vec(await instantQuery(src, 'acc', 'c', 50 + 300)), {}, 'a sample exactly 5 minutes old is out')
  close(t, await one('c offset 30s', 60), 15)
})

test('the _over_time functions', async (t) => {
  const g = '{__name__="g",host="x"}'
  close(t, await one(`sum_over_time(${g}[1m])`), 10)
  close(t, await one(`avg_over_time(${g}[1m])`), 2.5)
  close(t, await one(`min_over_time(${g}[1m])`), 1)
  close(t, await one(`max_over_time(${g}[1m])`), 4)
  close(t, await one(`last_over_time(${g}[1m])`), 3)
  // Sorted 1 2 3 4, rank 0.9 x 3 = 2.7: 3 + 0.7 x (4 - 3).
  close(t, await one(`quantile_over_time(0.9, ${g}[1m])`), 3.7)
  const last = await instantQuery(src, 'acc', `last_over_time(${g}[1m])`, 60)
  t.deepEqual(
    last.resultType === 'vector' && last.result[0].metric,
    { __name__: 'g', job: 'a', host: 'x' },
    'last_over_time keeps the name',
  )
  const rate = await instantQuery(src, 'acc', 'rate(c[1m])', 60)
  t.deepEqual(rate.resultType === 'vector' && rate.result[0].metric, { job: 'a' }, 'rate drops the name')
})

test('aggregations with by and without', async (t) => {
  t.deepEqual(vec(await instantQuery(src, 'acc', 'sum by (job) (g)', 60)), { '{"job":"a"}': 3, '{"job":"b"}': 27.5 })
  t.deepEqual(vec(await instantQuery(src, 'acc', 'max without (host) (g)', 60)), { '{"job":"a"}': 3, '{"job":"b"}': 30 })
  close(t, await one('avg(g)'), (3 + 30 - 2.5) / 3)
  close(t, await one('count(g)'), 3)
  close(t, await one('min(g)'), -2.5)
  // 0.5 of -2.5, 3, 30: the middle one.
  close(t, await one('quantile(0.5, g)'), 3)
  t.deepEqual(
    Object.values(vec(await instantQuery(src, 'acc', 'topk(2, g)', 60))).sort((a, b) => a - b),
    [3, 30],
  )
  t.deepEqual(vec(await instantQuery(src, 'acc', 'bottomk by (job) (1, g)', 60)), {
    '{"__name__":"g","job":"a","host":"x"}': 3,
    '{"__name__":"g","job":"b","host":"z"}': -2.5,
  })
})

test('binary operators: scalars, vectors, bool, on and ignoring', async (t) => {
  const s = await instantQuery(src, 'acc', '2 ^ 3 + 1 - 4 % 3 * 2', 60)
  t.deepEqual(s, { resultType: 'scalar', result: [60, '7'] })
  t.deepEqual(await instantQuery(src, 'acc', '1 < bool 2', 60), { resultType: 'scalar', result: [60, '1'] })
  // A comparison filters and keeps the name; with bool it answers 0/1 and drops it.
  t.deepEqual(vec(await instantQuery(src, 'acc', 'g > 2', 60)), {
    '{"__name__":"g","job":"a","host":"x"}': 3,
    '{"__name__":"g","job":"b","host":"y"}': 30,
  })
  t.deepEqual(vec(await instantQuery(src, 'acc', '2 < g', 60)), {
    '{"__name__":"g","job":"a","host":"x"}': 3,
    '{"__name__":"g","job":"b","host":"y"}': 30,
  })
  t.deepEqual(vec(await instantQuery(src, 'acc', 'g > bool 2', 60)), {
    '{"job":"a","host":"x"}': 1,
    '{"job":"b","host":"y"}': 1,
    '{"job":"b","host":"z"}': 0,
  })
  // c{job=a} / g matched on job: only g{job=a} is on the right once.
  t.deepEqual(vec(await instantQuery(src, 'acc', 'c / on(job) g{job="a"}', 60)), { '{"job":"a"}': 15 })
  t.deepEqual(vec(await instantQuery(src, 'acc', 'c - ignoring(host) g{host="x"}', 60)), { '{"job":"a"}': 42 })
  const many = await t.throwsAsync(instantQuery(src, 'acc', 'c + on(job) g', 60), { instanceOf: PromQLError })
  t.is(many.code, 'promql_execution')
  t.regex(many.message, /many-to-many matching not allowed/)
  t.deepEqual(vec(await instantQuery(src, 'acc', '-g{host="z"}', 60)), { '{"job":"b","host":"z"}': 2.5 })
})

test('math functions and time(), vector(), scalar()', async (t) => {
  const x = '{__name__="g",host="z"}'
  close(t, await one(`abs(${x})`), 2.5)
  close(t, await one(`ceil(${x})`), -2)
  close(t, await one(`floor(${x})`), -3)
  close(t, await one(`round(${x})`), -2)
  close(t, await one(`round(${x} * 1.23, 0.5)`), -3)
  close(t, await one(`clamp_min(${x}, 0)`), 0)
  close(t, await one(`clamp_max(g{host="y"}, 10)`), 10)
  t.deepEqual(await instantQuery(src, 'acc', 'time()', 61.5), { resultType: 'scalar', result: [61.5, '61.5'] })
  t.deepEqual(await instantQuery(src, 'acc', 'vector(2)', 60), { resultType: 'vector', result: [{ metric: {}, value: [60, '2'] }] })
  t.deepEqual(await instantQuery(src, 'acc', `scalar(${x})`, 60), { resultType: 'scalar', result: [60, '-2.5'] })
  t.deepEqual(await instantQuery(src, 'acc', 'scalar(g)', 60), { resultType: 'scalar', result: [60, 'NaN'] })
})

test('Prometheus 3 quoting names a metric outside the legacy character set', async (t) => {
  close(t, await one('{"api.latency"}'), 7)
  close(t, await one('{"api.latency", job="a"} * 2'), 14)
  t.deepEqual(parsePromQL('{"api.latency"}'), {
    type: 'selector',
    matchers: [{ name: '__name__', op: '=', value: 'api.latency' }],
    offset: 0,
    text: '{"api.latency"}',
  })
})

test('Prometheus 3 quoting names labels outside the legacy character set: matchers, by, without, on, ignoring', (t) => {
  const sum = parsePromQL('sum by ("host.name", job) (x)')
  t.deepEqual(sum.type === 'aggregate' && sum.grouping, { without: false, labels: ['host.name', 'job'] })
  const without = parsePromQL("sum without ('k8s-pod') (x)")
  t.deepEqual(without.type === 'aggregate' && without.grouping, { without: true, labels: ['k8s-pod'] })
  const on = parsePromQL('x / on("host.name") y')
  t.deepEqual(on.type === 'binary' && on.matching, { on: true, labels: ['host.name'] })
  const ignoring = parsePromQL('x - ignoring("k8s-pod", job) y')
  t.deepEqual(ignoring.type === 'binary' && ignoring.matching, { on: false, labels: ['k8s-pod', 'job'] })
  const sel = parsePromQL('{"api.latency", "host.name"="a", "k8s-pod"=~"p-.*"}')
  t.deepEqual(sel.type === 'selector' && sel.matchers, [
    { name: '__name__', op: '=', value: 'api.latency' },
    { name: 'host.name', op: '=', value: 'a' },
    { name: 'k8s-pod', op: '=~', value: 'p-.*' },
  ])
})

test('a range query evaluates each step and groups by series', async (t) => {
  const d = await rangeQuery(src, 'acc', 'c', 20, 50, 15)
  t.deepEqual(d, {
    resultType: 'matrix',
    result: [
      {
        metric: { __name__: 'c', job: 'a' },
        values: [
          [20, '15'],
          [35, '30'],
          [50, '45'],
        ],
      },
    ],
  })
  const s = await rangeQuery(src, 'acc', '1 + 1', 0, 30, 15)
  t.deepEqual(s, {
    resultType: 'matrix',
    result: [
      {
        metric: {},
        values: [
          [0, '2'],
          [15, '2'],
          [30, '2'],
        ],
      },
    ],
  })
  await t.throwsAsync(rangeQuery(src, 'acc', 'c[1m]', 0, 30, 15), { message: /invalid expression type "range vector" for range query/ })
  await t.throwsAsync(rangeQuery(src, 'acc', 'c', 0, 200_000, 1), { message: /11,000 points/ })
})

test("a range query's answer evaluated a series at a time is the step-by-step one: numbers, series and their order", async (t) => {
  // Counters with resets and gaps longer than the lookback, one starting late and one ending early, samples on the
  // steps' times (a window's edges) and between them; gauges with NaN and -0, whose groups' order changes as their
  // members come and go (group x first answers after y, through inst 3). Over 2 days (rollup resolution: windows
  // closed on the left) and 6 hours (raw). Each query is asked as it is and as `(q) != NaN`, which keeps every
  // sample (NaN != NaN) and every label but, being a binary operation, is evaluated step by step.
  let seed = 11
  const rnd = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  const day = 86_400
  const data: Array<{ labels: Labels; samples: Array<[number, number]> }> = []
  const counter = (labels: Labels, from: number, to: number, every: number, onGrid: boolean) => {
    const samples: Array<[number, number]> = []
    let total = 0
    for (let x = from; x < to; x += every) {
      if (x % 7_200 > 6_000 && x % 7_200 < 6_700) continue
      total = rnd() < 0.01 ? Math.floor(rnd() * 5) : total + Math.floor(rnd() * 9)
      samples.push([onGrid ? x : x + Math.floor(rnd() * every), total])
    }
    data.push({ labels, samples })
  }
  counter({ __name__: 'cnt', job: 'a', inst: '1' }, 0, 2 * day + 3_600, 60, false)
  counter({ __name__: 'cnt', job: 'a', inst: '2' }, 20_100, 2 * day + 3_600, 150, true)
  counter({ __name__: 'cnt', job: 'b', inst: '1' }, 0, day, 45, false)
  counter({ __name__: 'dup', job: 'b', inst: '1' }, day - 3_000, day + 3_000, 60, true)
  const gauge = (labels: Labels, from: number, every: number) => {
    const samples: Array<[number, number]> = []
    for (let x = from; x < 2 * day + 3_600; x += every) {
      if (x % 10_000 > 9_000) continue
      const r = rnd()
      samples.push([x, r < 0.02 ? Number.NaN : r < 0.03 ? -0 : Math.round((r - 0.5) * 1000) / 10])
    }
    data.push({ labels, samples })
  }
  gauge({ __name__: 'g', grp: 'x', inst: '1' }, 30_000, 90)
  gauge({ __name__: 'g', grp: 'y', inst: '2' }, 600, 120)
  gauge({ __name__: 'g', grp: 'x', inst: '3' }, 600, 75)
  const source = memorySource(data)
  const queries = [
    'cnt',
    'g',
    'cnt offset 7m',
    'rate(cnt[5m])',
    'rate(cnt[5m15s])',
    'increase(cnt[1h])',
    'irate(cnt[10m])',
    'delta(g[5m])',
    'sum(rate(cnt[5m]))',
    'sum by (job) (rate(cnt[5m15s]))',
    'sum without (inst) (increase(cnt[30m] offset 5m))',
    'avg by (grp) (g)',
    'min(g)',
    'max by (grp) (g)',
    'count(cnt)',
    'count by (inst) (rate(cnt[5m]))',
    'avg(avg_over_time(g[10m]))',
    'last_over_time(cnt[1h])',
    'min_over_time(g[20m])',
    'max_over_time(g[20m])',
    'sum_over_time(g[5m])',
    'count_over_time(cnt[5m] offset 1h)',
    'quantile_over_time(0.9, g[15m])',
    'rate({__name__=~"cnt|dup"}[5m])',
    'sum(rate({__name__=~"cnt|dup"}[5m]))',
  ]
  const settled = (p: Promise<QueryData>) =>
    p.then(
      (d) => JSON.stringify(d),
      (e: Error) => `error: ${e.message}`,
    )
  let refused = 0
  for (const [start, end, steps] of [
    [0, 2 * day, [300, 900, 3_600]],
    [3_000, 3_000 + 6 * 3_600, [60, 77, 300]],
  ] as const) {
    for (const step of steps)
      for (const q of queries) {
        const columns = await settled(rangeQuery(source, 'acc', q, start, end, step))
        const stepwise = await settled(rangeQuery(source, 'acc', `(${q}) != NaN`, start, end, step))
        t.is(columns, stepwise, `${q} from ${start} to ${end} step ${step}`)
        if (columns.startsWith('error')) refused++
      }
  }
  // rate() of cnt and dup over the day they overlap: two series of one label set, refused (with or without sum).
  t.is(refused, 2 * 3)
})

test('anything outside the supported set is refused by name', async (t) => {
  for (const [q, message] of [
    ['histogram_quantile(0.9, x)', /function "histogram_quantile" is not supported/],
    ['stddev(x)', /aggregation "stddev" is not supported/],
    ['a and b', /the "and" operator is not supported/],
    ['a / on(x) group_left b', /group_left and group_right are not supported/],
    ['rate(x[5m:1m])', /subqueries/],
    ['x @ 100', /@ modifier is not supported/],
    ['rate(x[5m]', /parse error/],
    ['rate(x)', /expected type range vector in call to function "rate", got instant vector/],
    ['sum(x[5m])', /expected type instant vector in aggregation expression, got range vector/],
    ['1 > 2', /comparisons between scalars must use BOOL modifier/],
    ['{job=~".*"}', /at least one non-empty matcher/],
    ['x{a=~"("}', /invalid regular expression/],
    ['', /empty query/],
  ] as const) {
    const err = t.throws(() => parsePromQL(q), { instanceOf: PromQLError }, q)
    t.regex(err.message, message, q)
    t.is(err.code, 'promql_bad_data')
  }
})

test('a query parsed before is the same tree; a refused one is refused every time it is asked', (t) => {
  const q = 'sum by (host) (rate(parsed_twice[5m]))'
  const tree = parsePromQL(q)
  t.is(parsePromQL(q), tree)
  t.deepEqual(parsePromQL(` ${q}`), tree, 'another text of the same query: an equal tree of its own')
  t.not(parsePromQL(` ${q}`), tree)
  for (let i = 0; i < 2; i++)
    t.throws(() => parsePromQL('rate(parsed_twice)'), { instanceOf: PromQLError, message: /expected type range vector/ })
})

test('values are written as Prometheus writes them', (t) => {
  t.is(formatValue(1e21), '1000000000000000000000')
  t.is(formatValue(1.5e-7), '0.00000015')
  t.is(formatValue(Number.POSITIVE_INFINITY), '+Inf')
  t.is(formatValue(Number.NaN), 'NaN')
  t.is(formatValue(0.1 + 0.2), '0.30000000000000004')
})

test('a selector whose series changed since its last query reads the series found now, their labels and samples', async (t) => {
  // The samples of the series a selector found last are read beside the look-up (engine.ts, load): kept only when
  // the look-up finds the same series, read again otherwise.
  const before = memorySource([
    { labels: { __name__: 'moved', job: 'a' }, samples: [[10, 1]] },
    { labels: { __name__: 'moved', job: 'b' }, samples: [[10, 2]] },
  ])
  const values = async (src: SeriesSource) => {
    const d = await rangeQuery(src, 'acc-moved', 'moved', 10, 10, 15)
    if (d.resultType !== 'matrix') throw new Error(d.resultType)
    return d.result.map((r) => [r.metric.job, r.values[0][1]])
  }
  t.deepEqual(await values(before), [
    ['a', '1'],
    ['b', '2'],
  ])
  // A series more (ids 0 to 2): read again.
  const more = memorySource([
    { labels: { __name__: 'moved', job: 'a' }, samples: [[10, 1]] },
    { labels: { __name__: 'moved', job: 'b' }, samples: [[10, 2]] },
    { labels: { __name__: 'moved', job: 'c' }, samples: [[10, 3]] },
  ])
  t.deepEqual(await values(more), [
    ['a', '1'],
    ['b', '2'],
    ['c', '3'],
  ])
  // The same ids, a series' kind changed (its samples are read by kind, as the service reads a counter's running
  // total): read again.
  const kinds = memorySource([
    { labels: { __name__: 'moved', job: 'a' }, samples: [[10, 1]] },
    { labels: { __name__: 'moved', job: 'b' }, samples: [[10, 2]] },
    { labels: { __name__: 'moved', job: 'c' }, kind: 'counter', samples: [[10, 3]] },
  ])
  const byKind: SeriesSource = {
    selectSeries: kinds.selectSeries,
    async readSamples(list) {
      return new Map(list.map((s) => [s.id, { t: [10], v: [s.kind === 'counter' ? 30 : Number(s.id) + 1] }]))
    },
  }
  t.deepEqual((await values(byKind))[2], ['c', '30'])
  // The same ids and kinds: the labels are the look-up's own.
  const relabelled = memorySource([
    { labels: { __name__: 'moved', job: 'x' }, samples: [[10, 1]] },
    { labels: { __name__: 'moved', job: 'y' }, samples: [[10, 2]] },
    { labels: { __name__: 'moved', job: 'z' }, kind: 'counter', samples: [[10, 30]] },
  ])
  t.deepEqual(await values(relabelled), [
    ['x', '1'],
    ['y', '2'],
    ['z', '30'],
  ])
})

test("the samples' arrays come from an arena whose memory the next query reuses, and no answer holds a view of it", async (t) => {
  // As the service's source takes them (source.ts): each series' times and values are views of the query's arena.
  const buffers: ArrayBufferLike[] = []
  const fromArena = (value: number): SeriesSource => ({
    selectSeries: async () => [0, 1].map((i) => ({ id: `a${i}`, labels: { __name__: 'arena', i: String(i) }, kind: 'gauge' as const })),
    async readSamples(list, _start, _end, _resolution, _stretches, arena) {
      return new Map(
        list.map((s, i) => {
          const ts = arena!.take(3)
          const vs = arena!.take(3)
          buffers.push(ts.buffer)
          ts.set([10_000, 20_000, 30_000])
          vs.set([value + i, value + i, value + i])
          return [s.id, { t: ts, v: vs, unit: 'ms' as const }]
        }),
      )
    },
  })
  const first = await rangeQuery(fromArena(1), 'acc-arena', 'arena', 10, 30, 10)
  const firstRange = await instantQuery(fromArena(1), 'acc-arena', 'arena[1m]', 30)
  const kept = JSON.stringify([first, firstRange])
  const second = await rangeQuery(fromArena(7), 'acc-arena', 'arena', 10, 30, 10)
  t.is(buffers.at(-1), buffers[0], "the second query's samples are in the first's memory")
  t.is(JSON.stringify([first, firstRange]), kept, 'the first answers are as they were')
  t.true(second.resultType === 'matrix' && second.result.every((s) => s.values.every(([, v]) => v === '7' || v === '8')))
  // Within one arena the views do not overlap; once released, its chunk is the next arena's.
  const a = new Arena()
  const x = a.take(4)
  const y = a.take(4)
  x.fill(1)
  y.fill(2)
  t.deepEqual([...x], [1, 1, 1, 1])
  a.release()
  t.is(new Arena().take(4).buffer, x.buffer)
})
