import test from 'ava'
import { ConfigError, loadConfig } from '../../shared/config.js'
import { Draft } from '../../shared/query/draft.js'
import { formatNumber } from '../../shared/query/format.js'
import { parseIntent } from '../../shared/query/intent.js'
import { findNamedStats, fuzzyMatch, type StatRef } from '../../shared/query/match.js'
import { checkSentence } from '../../shared/query/narrate.js'
import { findPeriods } from '../../shared/query/periods.js'
import type { DataRecord } from '../../shared/query/schema.js'
import { describeVerdict, verify } from '../../shared/query/verify.js'

// Wednesday 2026-11-25 15:42:17 UTC.
const NOW = new Date('2026-11-25T15:42:17Z')
const STATS: StatRef[] = (
  [
    ['signups', 'counter'],
    ['orders', 'counter'],
    ['errors', 'counter'],
    ['api.latency', 'gauge'],
    ['latency', 'gauge'],
    ['page-views', 'counter'],
    ['cpu_usage', 'gauge'],
  ] as const
).map(([name, kind], i) => ({ id: String(i), name, kind }))

const period = (q: string) => {
  const [p] = findPeriods(q, NOW)
  return p && [p.from.toISOString(), p.to.toISOString(), p.label]
}

test('13 periods: calendar periods in UTC, weeks from Monday, rolling windows on whole minutes', (t) => {
  const table: Array<[string, string, string]> = [
    ['today', '2026-11-25T00:00:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['yesterday', '2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z'],
    ['the day before yesterday', '2026-11-23T00:00:00.000Z', '2026-11-24T00:00:00.000Z'],
    ['in the last 6 hours', '2026-11-25T09:42:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['past 2 days', '2026-11-23T15:42:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['last 24h', '2026-11-24T15:42:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['over the last twelve hours', '2026-11-25T03:42:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['the past week', '2026-11-18T15:42:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['this week', '2026-11-23T00:00:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['last week', '2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z'],
    ['this month', '2026-11-01T00:00:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['last month', '2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'],
    ['this quarter', '2026-10-01T00:00:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['last quarter', '2026-07-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z'],
    ['since monday', '2026-11-23T00:00:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['since 2026-11-20', '2026-11-20T00:00:00.000Z', '2026-11-25T15:42:17.000Z'],
    ['on nov 20', '2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z'],
    ['on 20th november', '2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z'],
    ['in october', '2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'],
    ['in december', '2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    ['between 2026-11-01 and 2026-11-07', '2026-11-01T00:00:00.000Z', '2026-11-08T00:00:00.000Z'],
    ['from nov 3 to nov 9', '2026-11-03T00:00:00.000Z', '2026-11-10T00:00:00.000Z'],
    ['between 9 and 5 yesterday', '2026-11-24T09:00:00.000Z', '2026-11-24T17:00:00.000Z'],
    ['yesterday between 2pm and 3pm', '2026-11-24T14:00:00.000Z', '2026-11-24T15:00:00.000Z'],
    ['from 10am to noon', '2026-11-25T10:00:00.000Z', '2026-11-25T12:00:00.000Z'],
    ['on monday from 9:30 to 11', '2026-11-23T09:30:00.000Z', '2026-11-23T11:00:00.000Z'],
    ['3 days ago', '2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z'],
    ['two weeks ago', '2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z'],
  ]
  for (const [q, from, to] of table) t.deepEqual(period(q)?.slice(0, 2), [from, to], q)
  t.is(period('between 9 and 5 yesterday')?.[2], 'yesterday between 09:00 and 17:00 UTC')
  t.is(period('last week')?.[2], 'last week (2026-11-16 to 2026-11-22 UTC)')
})

test('13 periods: the natural previous period is like for like; the future is flagged', (t) => {
  const [today] = findPeriods('today', NOW)
  t.deepEqual(
    [today.previous().from.toISOString(), today.previous().to.toISOString()],
    ['2026-11-24T00:00:00.000Z', '2026-11-24T15:42:17.000Z'],
  )
  const [week] = findPeriods('this week', NOW)
  t.deepEqual(
    [week.previous().from.toISOString(), week.previous().to.toISOString()],
    ['2026-11-16T00:00:00.000Z', '2026-11-18T15:42:17.000Z'],
  )
  const [six] = findPeriods('last 6 hours', NOW)
  t.deepEqual(
    [six.previous().from.toISOString(), six.previous().to.toISOString()],
    ['2026-11-25T03:42:00.000Z', '2026-11-25T09:42:00.000Z'],
  )
  for (const q of ['tomorrow', 'next week', 'next 3 days']) t.true(findPeriods(q, NOW)[0]?.future, q)
  t.deepEqual(findPeriods('how many signups', NOW), [])
})

test('13 stat matching: exact, then normalised, then fuzzy only when close and clearly ahead', (t) => {
  t.like(findNamedStats('how many signups', STATS).matches[0], { how: 'exact', phrase: 'signups' })
  t.like(findNamedStats('how many sign ups', STATS).matches[0], { how: 'normalised', stat: { name: 'signups' } })
  t.like(findNamedStats('API-Latency today', STATS).matches[0], { how: 'normalised', stat: { name: 'api.latency' } })
  t.deepEqual(
    findNamedStats('api latency', STATS).matches.map((m) => m.stat.name),
    ['api.latency'],
    'the longer name wins over the one inside it',
  )
  t.like(fuzzyMatch('signpus', STATS).match, { how: 'fuzzy', stat: { name: 'signups' } })
  const tie = fuzzyMatch('latancy', STATS)
  t.is(tie.match, null, 'two candidates within the margin: no guess')
  t.deepEqual(tie.candidates.slice(0, 2).sort(), ['api.latency', 'latency'])
  t.deepEqual(fuzzyMatch('weather', STATS), { match: null, candidates: [] })
})

test('13 intents: default aggregation by kind, operations, declines', (t) => {
  const i = (q: string) => parseIntent(q, STATS, NOW)
  t.like(i('how many signups yesterday?'), { op: 'aggregate', agg: 'sum' })
  t.like(i('average api latency over the last 6 hours'), { op: 'aggregate', agg: 'avg' })
  t.like(i('compare orders this week with last week'), { op: 'compare' })
  t.like(i('which stat grew most today?'), { op: 'rank', agg: 'change', order: 'desc' })
  t.like(i('when did errors peak?'), { op: 'peak', order: 'desc' })
  t.like(i('highest orders yesterday'), { op: 'peak', agg: 'sum' }, "a counter's highest is its busiest slot")
  t.like(i('what is the latest cpu usage'), { op: 'aggregate', agg: 'last', window: null })
  t.like(i('why did errors go up?'), { op: 'unknown', unsupported: true })
  t.like(i('signups tomorrow'), { op: 'unknown', unsupported: true })
  t.like(i('how many widgets yesterday'), { op: 'unknown' })
  t.like(i('how many people signed up yesterday'), { op: 'unknown' }, '"signed up" is not read as "up"')
  // "per day" is a breakdown by day, not an unread period.
  t.like(i('page views per day this week'), { op: 'breakdown', bucket: 86_400 })
  for (const q of ['total signups in 2025', 'errors on weekends', 'signups last night', 'orders on 11/20']) {
    t.like(i(q), { op: 'unknown', unreadPeriod: true }, `${q}: a period it cannot read is declined, not replaced by the default`)
  }
  t.like(i('which day had the most orders last month'), { op: 'peak' })
  t.like(
    i('how many signups from germany yesterday'),
    { op: 'unknown', unsupported: true },
    'a breakdown asked for is declined, not ignored',
  )
})

test('the one number formatter: grouping, two decimals, significant digits below 1, percentages', (t) => {
  t.is(formatNumber(1_234_567.891), '1,234,567.89')
  t.is(formatNumber(12), '12')
  t.is(formatNumber(0.0012345), '0.00123')
  t.is(formatNumber(-5.5), '-5.5')
  t.is(formatNumber(12.345, { percent: true, signed: true }), '+12.3%')
  t.is(formatNumber(-0.001, { percent: true }), '0%', 'no "-0"')
  t.is(formatNumber(1e15), '1,000,000,000,000,000')
})

test('the verifier: every number must be in data at its shown precision; dates, times and quoted names are not claims', (t) => {
  const data: DataRecord[] = [
    { type: 'retrieved', stat: 'api.latency.p95', agg: 'avg', value: 150.46, min: 100, max: 1234.5, n: 3 },
    { type: 'derived', agg: 'pct_change', value: -12.34 },
  ]
  const ok = verify(
    'api.latency.p95 averaged 150.5 on 2026-11-20 at 14:00 UTC (lowest 100, highest 1,234.5, 3 readings), down 12.3%.',
    data,
    ['api.latency.p95'],
  )
  t.deepEqual(ok, { ok: true, checked: 5, misses: [] })
  t.is(describeVerdict(ok), 'passed: 5 of 5 numbers grounded in data')
  const bad = verify('api.latency.p95 averaged 150.4 with 7 readings, -12.3%', data, ['api.latency.p95'])
  t.deepEqual(bad.misses, ['150.4', '7'])
  t.is(describeVerdict(bad), 'failed: 2 ungrounded numbers (150.4, 7)')
  t.false(verify('+12.3%', data).ok, 'a stated sign must match')
  t.true(verify('no numbers here', []).ok)
})

test('model wording rules: placeholders only, no digit or number word, every value kept', (t) => {
  const d = new Draft()
  d.text = `${d.stat('signups', 'counter')} totalled ${d.num(12, 'total')} ${d.period('yesterday')}.`
  t.is(d.fill(), 'signups totalled 12 yesterday.')
  t.is(checkSentence('{{P1}}, {{S1}} came to {{V1}}.', d), null)
  t.is(checkSentence('{{S1}} came to {{V1}} in 2 days.', d), 'digit outside the placeholders (2)')
  t.is(checkSentence('{{S1}} came to {{V1}}{{V1}}0.', d), 'digit outside the placeholders (0)')
  t.is(checkSentence('{{S1}} came to {{V1}}, twice the usual.', d), 'number word outside the placeholders (twice)')
  t.is(checkSentence('{{S1}} came to {{V2}}.', d), 'unknown placeholder V2')
  t.is(checkSentence('{{S1}} did well {{P1}}.', d), 'value placeholder V1 left out')
})

test('10 settings: no model unless QUERY_LLM_BASE_URL is set; a base URL needs a model name', (t) => {
  t.is(loadConfig({}).queryLlm, undefined)
  t.deepEqual(loadConfig({ QUERY_LLM_BASE_URL: 'http://127.0.0.1:8000/v1/', QUERY_LLM_MODEL: 'm' }).queryLlm, {
    baseUrl: 'http://127.0.0.1:8000/v1',
    apiKey: undefined,
    model: 'm',
    timeoutMs: 4000,
  })
  const err = t.throws(() => loadConfig({ QUERY_LLM_BASE_URL: 'http://127.0.0.1:8000/v1' }), { instanceOf: ConfigError })
  t.regex(err!.message, /QUERY_LLM_MODEL: required when QUERY_LLM_BASE_URL is set/)
})

// A stat written only with tags (docs/decisions.md §24): three hosts, two regions.
const TAGGED: StatRef[] = [
  ...STATS,
  {
    id: 'r',
    name: 'requests',
    kind: 'counter',
    series: ['r', 'r1', 'r2', 'r3'],
    tagged: [
      { id: 'r1', tags: { host: 'web1', region: 'eu' } },
      { id: 'r2', tags: { host: 'web2', region: 'eu' } },
      { id: 'r3', tags: { host: 'web3', region: 'us' } },
    ],
  },
]

test('tags: "on host web1", "for host=web1", "where region is eu" and "on web1" narrow the stat to those series; "by host" groups', (t) => {
  for (const [q, ids, name] of [
    ['requests on host web1 yesterday', ['r1'], 'requests{host=web1}'],
    ['total requests for host=web2 last week', ['r2'], 'requests{host=web2}'],
    ['requests where region is eu today', ['r1', 'r2'], 'requests{region=eu}'],
    ['requests on web3 today', ['r3'], 'requests{host=web3}'],
    ['requests host:web1 region:eu yesterday', ['r1'], 'requests{host=web1,region=eu}'],
  ] as const) {
    const i = parseIntent(q, TAGGED, NOW)
    t.is(i.op, 'aggregate', q)
    t.deepEqual(i.stats[0].series, [...ids], q)
    t.is(i.stats[0].name, name, q)
    t.is(i.stats[0].base, 'requests', q)
  }
  const g = parseIntent('requests yesterday by host', TAGGED, NOW)
  t.like(g, { op: 'aggregate', groupBy: 'host' })
  t.is(g.stats[0].name, 'requests')
  t.is(parseIntent('average requests per region this week', TAGGED, NOW).groupBy, 'region')
  const both = parseIntent('requests by host for region eu yesterday', TAGGED, NOW)
  t.like(both, { groupBy: 'host', filter: { region: 'eu' } })
  t.deepEqual(both.stats[0].series, ['r1', 'r2'])
  // "for us" is not the region us: a short or common value needs its key.
  t.is(parseIntent('orders for us yesterday', TAGGED, NOW).filter, undefined)
})

test('tags: what cannot be answered by tag is declined saying why, and names the tags the stat has', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['requests on host web9 yesterday', /no series of the stat asked about has that tag value/],
    ['orders by host yesterday', /has no tags: it is answered as a whole/],
    ['requests by host yesterday vs the day before yesterday', /a figure per tag value is given for a total/],
    ['when did requests peak yesterday by host', /a figure per tag value is given for a total/],
    ['requests by host and orders yesterday', /one stat at a time/],
  ]
  for (const [q, reason] of cases) {
    const i = parseIntent(q, TAGGED, NOW)
    t.is(i.op, 'unknown', q)
    t.regex(i.reason ?? '', reason, q)
  }
  t.deepEqual(parseIntent('requests on host web9 yesterday', TAGGED, NOW).tagValues, ['host=web1', 'host=web2', 'host=web3'])
})

test('weekends: last weekend is Saturday and Sunday just past; this weekend on a weekday has not begun (said why); on a Sunday it runs', (t) => {
  t.deepEqual(period('orders last weekend'), [
    '2026-11-21T00:00:00.000Z',
    '2026-11-23T00:00:00.000Z',
    'last weekend (2026-11-21 to 2026-11-22 UTC)',
  ])
  t.deepEqual(period('orders over the weekend'), period('orders last weekend'))
  const i = parseIntent('orders this weekend', STATS, NOW)
  t.is(i.op, 'unknown')
  t.regex(i.reason!, /^this weekend has not begun yet \(it starts on Saturday\)/)
  const sunday = new Date('2026-11-29T10:30:00Z')
  const [p] = findPeriods('orders this weekend', sunday)
  t.deepEqual([p.from.toISOString(), p.to.toISOString()], ['2026-11-28T00:00:00.000Z', sunday.toISOString()])
  t.deepEqual(
    [p.sofar!.whole.from.toISOString(), p.sofar!.whole.to.toISOString()],
    ['2026-11-21T00:00:00.000Z', '2026-11-23T00:00:00.000Z'],
  )
  const [last] = findPeriods('orders last weekend', sunday)
  t.is(last.from.toISOString(), '2026-11-21T00:00:00.000Z')
  t.like(parseIntent('orders this weekend', STATS, sunday), { op: 'aggregate' })
})
