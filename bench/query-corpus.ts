// The question corpus of `npm run bench:query`: questions over the seeded
// account (query-seed.ts), each with the intent a person expects and the
// numbers the oracle reads off the raw points. Windows are written out here
// from the rules the README states (UTC calendar periods, weeks from Monday,
// rolling windows on whole minutes, like-for-like previous periods), not taken
// from the engine. `holdout` questions were written with the rest but not run
// while the engine was developed; the bench reports them separately.
import { DAY, HOUR, MIN, type Oracle, type Window } from './query-seed.js'

export interface Case {
  q: string
  /** Expected operation; 'decline' = the engine must not answer with a number. */
  op: 'aggregate' | 'compare' | 'rank' | 'peak' | 'breakdown' | 'decline'
  /** A breakdown: how many buckets data must hold. */
  buckets?: number
  stat?: string
  window?: Window
  compareTo?: Window
  /** A same-stretch comparison: the whole earlier period given as context (its value must be in data and shown). */
  context?: Window
  /** A decline: at least this many stat names the answer must offer (decision 13: the closest candidates). */
  namesCandidates?: number
  /** A decline: words its reason must hold (a decline is correct only when its reason is true). */
  reason?: RegExp
  /** Words the answer must hold. */
  says?: RegExp
  /** Numbers that must be in `data` and in the answer (at the precision shown). */
  numbers?: number[]
  /** Relative tolerance of `numbers` against data (percentiles from sketches: 0.01); the answer must show the data's value. */
  within?: number
  /** A peak's slot start, a latest value's time. */
  t?: number
  /** A rank's first stat. */
  top?: string
  /** For a decline: stats the answer should name. */
  candidates?: string[]
  holdout?: boolean
  tags: string[]
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const LONG_MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
]
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']

/** The windows of the corpus at `now` (a whole minute), computed by hand. */
export function windows(now: number) {
  const d0 = Math.floor(now / DAY) * DAY
  const D = (k: number) => d0 + k * DAY
  const dow = new Date(now * 1000).getUTCDay()
  const monday = D(-((dow + 6) % 7))
  const date = new Date(now * 1000)
  const month = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000
  const prevMonth = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - 1, 1) / 1000
  const quarter = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - (date.getUTCMonth() % 3), 1) / 1000
  const w = (from: number, to: number): Window => ({ from, to })
  const slotFor = (x: Window) => (x.to - x.from <= 3 * HOUR ? MIN : x.to - x.from <= 3 * DAY ? HOUR : DAY)
  const iso = (t: number) => new Date(t * 1000).toISOString().slice(0, 10)
  const short = (t: number) => `${MONTHS[new Date(t * 1000).getUTCMonth()]} ${new Date(t * 1000).getUTCDate()}`
  return {
    D,
    monday,
    slotFor,
    iso,
    short,
    weekdayName: (t: number) => WEEKDAYS[new Date(t * 1000).getUTCDay()],
    prevMonthName: LONG_MONTHS[new Date(prevMonth * 1000).getUTCMonth()],
    today: w(D(0), now),
    todayBefore: w(D(-1), now - DAY),
    yesterday: w(D(-1), D(0)),
    dayBefore: w(D(-2), D(-1)),
    day: (k: number) => w(D(-k), D(-k + 1)),
    hours: (h: number) => w(now - h * HOUR, now),
    hoursBefore: (h: number) => w(now - 2 * h * HOUR, now - h * HOUR),
    days: (n: number) => w(now - n * DAY, now),
    daysBefore: (n: number) => w(now - 2 * n * DAY, now - n * DAY),
    thisWeek: w(monday, now),
    thisWeekBefore: w(monday - 7 * DAY, now - 7 * DAY),
    lastWeek: w(monday - 7 * DAY, monday),
    weekBeforeLast: w(monday - 14 * DAY, monday - 7 * DAY),
    thisMonth: w(month, now),
    thisQuarter: w(quarter, now),
    lastMonth: w(prevMonth, month),
    /** The same elapsed stretch of last month as this month so far (all of last month when it is shorter). */
    lastMonthBefore: w(prevMonth, Math.min(prevMonth + (now - month), month)),
    /** The latest weekend (Saturday 00:00 to Monday 00:00 UTC) that is over, and the one running now (null on a weekday). */
    lastWeekend: dow === 6 || dow === 0 ? w(D(-(dow === 6 ? 7 : 8)), D(-(dow === 6 ? 5 : 6))) : w(D(-(dow + 1)), D(-(dow + 1) + 2)),
    thisWeekend: dow === 6 ? w(D(0), now) : dow === 0 ? w(D(-1), now) : null,
    since: (t: number) => w(t, now),
    range: (a: number, b: number) => w(a, b),
  }
}

export type W = ReturnType<typeof windows>

const sumOf = (o: Oracle, stat: string, x: Window) => [o.sum(stat, x)]
const avgOf = (o: Oracle, stat: string, x: Window) => [o.avg(stat, x), o.min(stat, x), o.max(stat, x), o.count(stat, x)]

/**
 * What a comparison must show: both values, the size of the difference and (when defined) the percentage
 * change. Equal values are said to be unchanged, in that word, rather than as a change of 0 (0 %).
 */
export function compared(o: Oracle, stat: string, a: Window, b: Window): Pick<Case, 'numbers' | 'says'> {
  const x = o.value(stat, a)
  const y = o.value(stat, b)
  if (x === y) return { numbers: [x, y], says: /\bunchanged\b/ }
  return { numbers: y ? [x, y, Math.abs(x - y), ((x - y) / Math.abs(y)) * 100] : [x, y, Math.abs(x - y)] }
}

export function buildCorpus(o: Oracle, now: number): Case[] {
  const W = windows(now)
  const cases: Case[] = []
  const add = (c: Case) => cases.push(c)

  // ---- totals of counters: phrasings x periods
  const counterPhrasings: Array<[string, string, Window, string]> = [
    ['how many signups yesterday?', 'signups', W.yesterday, 'yesterday'],
    ['How many signups did we get today?', 'signups', W.today, 'today'],
    ['total orders yesterday', 'orders', W.yesterday, 'yesterday'],
    ['orders in the last 6 hours', 'orders', W.hours(6), 'last N hours'],
    ['what was the sum of revenue last week', 'revenue', W.lastWeek, 'last week'],
    ['revenue this week so far', 'revenue', W.thisWeek, 'this week'],
    ['page views over the past 2 days', 'page-views', W.days(2), 'past N days'],
    ['How many page-views in the last 24 hours?', 'page-views', W.hours(24), 'last 24 hours'],
    ['checkout started yesterday', 'checkout.started', W.yesterday, 'yesterday'],
    ['how many checkout.started events this month', 'checkout.started', W.thisMonth, 'this month'],
    ['payments failed last month', 'payments.failed', W.lastMonth, 'last month'],
    ['total jobs processed in the last 7 days', 'jobs.processed', W.days(7), 'last N days'],
    ['JOBS_PROCESSED last week', 'jobs.processed', W.lastWeek, 'last week'],
    ['errors in the past hour', 'errors', W.hours(1), 'past hour'],
    ['how many errors since yesterday', 'errors', W.since(W.D(-1)), 'since'],
    [`signups since ${W.iso(W.D(-5))}`, 'signups', W.since(W.D(-5)), 'since date'],
    [`orders on ${W.iso(W.D(-3))}`, 'orders', W.day(3), 'on date'],
    [`how many signups on ${W.short(W.D(-4))}?`, 'signups', W.day(4), 'on month day'],
    [`revenue between ${W.iso(W.D(-10))} and ${W.iso(W.D(-8))}`, 'revenue', W.range(W.D(-10), W.D(-7)), 'between dates'],
    [`orders from ${W.short(W.D(-20))} to ${W.short(W.D(-14))}`, 'orders', W.range(W.D(-20), W.D(-13)), 'between dates'],
    ['signups yesterday between 9 and 5', 'signups', W.range(W.D(-1) + 9 * HOUR, W.D(-1) + 17 * HOUR), 'hours'],
    ['orders between 2pm and 4pm yesterday', 'orders', W.range(W.D(-1) + 14 * HOUR, W.D(-1) + 16 * HOUR), 'hours'],
    ['number of page views the day before yesterday', 'page-views', W.dayBefore, 'day before yesterday'],
    [`revenue in ${W.prevMonthName}`, 'revenue', W.lastMonth, 'in month'],
    ['count of errors during the last 3 days', 'errors', W.days(3), 'last N days'],
    ['sign ups in the last twelve hours', 'signups', W.hours(12), 'word number'],
    ['how many orders last 24h', 'orders', W.hours(24), 'compact unit'],
    ['payments.failed over the last 2 weeks', 'payments.failed', W.days(14), 'last N weeks'],
    ['total revenue', 'revenue', W.hours(24), 'default period'],
    ['How much revenue did we make yesterday?', 'revenue', W.yesterday, 'yesterday'],
    ['signups this month', 'signups', W.thisMonth, 'this month'],
    ['How many orders were placed in the past week?', 'orders', W.days(7), 'past week'],
    ['errors today', 'errors', W.today, 'today'],
    ['revenue since monday', 'revenue', W.since(W.monday), 'since weekday'],
    ['page views yesterday from 8am to 8pm', 'page-views', W.range(W.D(-1) + 8 * HOUR, W.D(-1) + 20 * HOUR), 'hours'],
    ['orders in the last 90 minutes', 'orders', W.range(now - 90 * MIN, now), 'last N minutes'],
    ['signups this quarter', 'signups', W.thisQuarter, 'this quarter'],
  ]
  for (const [q, stat, x, tag] of counterPhrasings)
    add({ q, op: 'aggregate', stat, window: x, numbers: sumOf(o, stat, x), tags: ['counter total', tag] })

  // ---- gauges: average by default, min, max, latest
  const gaugeAvg: Array<[string, string, Window, string]> = [
    ['average api latency over the last 6 hours', 'api.latency', W.hours(6), 'last N hours'],
    ['api.latency yesterday', 'api.latency', W.yesterday, 'default agg'],
    ['mean cpu usage this week', 'cpu_usage', W.thisWeek, 'this week'],
    ['avg queue depth today', 'queue_depth', W.today, 'today'],
    ['what was the average number of active users last week', 'active users', W.lastWeek, 'last week'],
    ['api latency p95 in the past day', 'api.latency.p95', W.hours(24), 'past day'],
    ['disk free gb last month', 'disk.free_gb', W.lastMonth, 'last month'],
    ['typical cpu_usage over the last 3 hours', 'cpu_usage', W.hours(3), 'last N hours'],
    [`average API-latency on ${W.iso(W.D(-6))}`, 'api.latency', W.day(6), 'on date'],
    ['Active Users this month', 'active users', W.thisMonth, 'this month'],
    ['what was the average queue depth the day before yesterday', 'queue_depth', W.dayBefore, 'day before yesterday'],
    ['cpu_usage last 30 days', 'cpu_usage', W.days(30), 'last N days'],
    ['api latency over the last 15 minutes', 'api.latency', W.range(now - 15 * MIN, now), 'last N minutes'],
    ['total cpu usage yesterday', 'cpu_usage', W.yesterday, 'sum on a gauge'],
  ]
  for (const [q, stat, x, tag] of gaugeAvg)
    add({ q, op: 'aggregate', stat, window: x, numbers: avgOf(o, stat, x), tags: ['gauge average', tag] })
  const gaugeMinMax: Array<[string, string, Window, 'min' | 'max']> = [
    ['max cpu usage this week', 'cpu_usage', W.thisWeek, 'max'],
    ['highest api latency yesterday', 'api.latency', W.yesterday, 'max'],
    ['lowest queue depth in the last 12 hours', 'queue_depth', W.hours(12), 'min'],
    ['minimum disk.free_gb last week', 'disk.free_gb', W.lastWeek, 'min'],
    ['maximum active users today', 'active users', W.today, 'max'],
    ['smallest api.latency.p95 reading last month', 'api.latency.p95', W.lastMonth, 'min'],
  ]
  for (const [q, stat, x, agg] of gaugeMinMax)
    add({ q, op: 'aggregate', stat, window: x, numbers: [agg === 'min' ? o.min(stat, x) : o.max(stat, x)], tags: ['gauge min/max'] })
  for (const [q, stat] of [
    ['what is the current queue depth', 'queue_depth'],
    ['latest api latency', 'api.latency'],
    ['cpu usage right now', 'cpu_usage'],
    ['most recent disk.free_gb', 'disk.free_gb'],
  ] as const) {
    const last = o.last(stat)
    add({ q, op: 'aggregate', stat, numbers: [last.value], t: last.t, tags: ['latest'] })
  }
  add({
    q: 'how many readings of cpu_usage today',
    op: 'aggregate',
    stat: 'cpu_usage',
    window: W.today,
    numbers: [o.count('cpu_usage', W.today)],
    tags: ['count'],
  })

  // ---- comparisons
  // A period still running against the whole one before compares the same elapsed stretch,
  // the whole earlier period given beside it.
  const stretches: Array<[string, string, Window, Window, Window]> = [
    ['compare orders this week with last week', 'orders', W.thisWeek, W.thisWeekBefore, W.lastWeek],
    ['signups today vs yesterday', 'signups', W.today, W.todayBefore, W.yesterday],
    ['jobs processed this week compared to last week', 'jobs.processed', W.thisWeek, W.thisWeekBefore, W.lastWeek],
    ['cpu usage today against yesterday', 'cpu_usage', W.today, W.todayBefore, W.yesterday],
    ['compare revenue last month with this month', 'revenue', W.lastMonthBefore, W.thisMonth, W.lastMonth],
    ['how did page views change this week', 'page-views', W.thisWeek, W.thisWeekBefore, W.lastWeek],
    ['how did errors change today', 'errors', W.today, W.todayBefore, W.yesterday],
    ['compare page views this week with last week', 'page-views', W.thisWeek, W.thisWeekBefore, W.lastWeek],
    ['orders today compared with yesterday', 'orders', W.today, W.todayBefore, W.yesterday],
  ]
  for (const [q, stat, a, b, ctx] of stretches) {
    const c = compared(o, stat, a, b)
    add({
      q,
      op: 'compare',
      stat,
      window: a,
      compareTo: b,
      context: ctx,
      ...c,
      numbers: [...c.numbers!, o.value(stat, ctx)],
      tags: ['compare', 'same stretch'],
    })
  }
  // A gauge with no reading in yesterday's same stretch: today so far against the whole of yesterday, said so.
  {
    const c = compared(o, 'host.load', W.today, W.yesterday)
    add({
      q: 'Compare the average host.load today with yesterday',
      op: 'compare',
      stat: 'host.load',
      ...c,
      window: W.today,
      compareTo: W.todayBefore,
      says: /is set against the whole of yesterday/,
      tags: ['compare', 'same stretch', 'no reading'],
    })
  }
  const comparisons: Array<[string, string, Window, Window, string]> = [
    ['did revenue grow yesterday?', 'revenue', W.yesterday, W.dayBefore, 'implicit'],
    ['compare api latency yesterday and the day before yesterday', 'api.latency', W.yesterday, W.dayBefore, 'gauge'],
    ['orders last week versus the week before', 'orders', W.lastWeek, W.weekBeforeLast, 'implicit'],
    ['signups in the last 6 hours versus the previous 6 hours', 'signups', W.hours(6), W.hoursBefore(6), 'rolling'],
    ['did checkout started go up over the past 3 days', 'checkout.started', W.days(3), W.daysBefore(3), 'rolling'],
    ['has the queue depth increased over the last 24 hours', 'queue_depth', W.hours(24), W.hoursBefore(24), 'rolling gauge'],
    [`signups on ${W.iso(W.D(-2))} vs ${W.iso(W.D(-9))}`, 'signups', W.day(2), W.day(9), 'dates'],
  ]
  for (const [q, stat, a, b, tag] of comparisons)
    add({ q, op: 'compare', stat, window: a, compareTo: b, ...compared(o, stat, a, b), tags: ['compare', tag] })

  // ---- rankings
  const top = (r: Array<{ stat: string; value: number }>) => r[0]
  for (const [q, x, order] of [
    ['which stat had the most yesterday?', W.yesterday, 'desc'],
    ['which counter had the highest total last week', W.lastWeek, 'desc'],
    ['which counters had the lowest total today', W.today, 'asc'],
  ] as const) {
    const r = top(o.rank('counter', x, order))
    add({ q, op: 'rank', window: x, top: r.stat, numbers: [r.value], tags: ['rank value'] })
  }
  for (const [q, x, order] of [
    ['which gauge had the highest average this week', W.thisWeek, 'desc'],
    ['which gauges had the lowest average yesterday', W.yesterday, 'asc'],
  ] as const) {
    const r = top(o.rank('gauge', x, order))
    add({ q, op: 'rank', window: x, top: r.stat, numbers: [r.value], tags: ['rank value'] })
  }
  const growth: Array<[string, Window, Window, 'desc' | 'asc']> = [
    ['which stat grew most today?', W.today, W.todayBefore, 'desc'],
    ['which stats dropped the most yesterday', W.yesterday, W.dayBefore, 'asc'],
    ['which metric increased most this week', W.thisWeek, W.thisWeekBefore, 'desc'],
    ['which stat fell most in the last 24 hours', W.hours(24), W.hoursBefore(24), 'asc'],
  ]
  for (const [q, a, b, order] of growth) {
    const r = o.growth(a, b, order)[0]
    add({ q, op: 'rank', window: a, compareTo: b, top: r.stat, numbers: [r.value, r.previous, r.pct], tags: ['rank growth'] })
  }

  // ---- peaks
  const peaks: Array<[string, string, Window, 'desc' | 'asc']> = [
    ['when did errors peak yesterday?', 'errors', W.yesterday, 'desc'],
    ['when did errors peak?', 'errors', W.hours(24), 'desc'],
    ['busiest hour for orders yesterday', 'orders', W.yesterday, 'desc'],
    ['when was api latency highest today', 'api.latency', W.today, 'desc'],
    ['when did page views peak this week', 'page-views', W.thisWeek, 'desc'],
    ['quietest hour for signups yesterday', 'signups', W.yesterday, 'asc'],
    ['peak cpu usage in the last 2 hours', 'cpu_usage', W.hours(2), 'desc'],
    ['when was queue depth lowest in the last 3 days', 'queue_depth', W.days(3), 'asc'],
    ['what time did revenue peak yesterday', 'revenue', W.yesterday, 'desc'],
    ['which day had the most orders last month', 'orders', W.lastMonth, 'desc'],
    ['highest orders yesterday', 'orders', W.yesterday, 'desc'],
    ['spike in payments.failed last week', 'payments.failed', W.lastWeek, 'desc'],
  ]
  for (const [q, stat, x, order] of peaks) {
    const p = o.peak(stat, x, W.slotFor(x), order)
    add({ q, op: 'peak', stat, window: x, t: p.t, numbers: [p.value], tags: ['peak', order] })
  }
  // Over days, the answer names the hour within the peak day too (its own record, its value in the answer for a counter).
  for (const [q, stat, x] of [
    ['when was api latency highest last week', 'api.latency', W.lastWeek],
    ['which day last week had the most orders, and at what hour', 'orders', W.lastWeek],
  ] as const) {
    const p = o.peak(stat, x, W.slotFor(x), 'desc')
    const h = o.peak(stat, { from: p.t, to: Math.min(p.t + DAY, x.to) }, HOUR, 'desc')
    const hh = new Date(h.t * 1000).toISOString().slice(11, 16)
    add({
      q,
      op: 'peak',
      stat,
      window: x,
      t: p.t,
      numbers: stat === 'orders' ? [p.value, h.value] : [p.value],
      says: new RegExp(`(hour starting|hour that day started) [^.]*${hh}`),
      tags: ['peak', 'desc', 'hour of the day'],
    })
  }

  // ---- typos and loose names (answerable; declining is honest, a different stat is wrong)
  const typos: Array<[string, string, Window]> = [
    ['how many signpus yesterday', 'signups', W.yesterday],
    ['revnue last week', 'revenue', W.lastWeek],
    ['page veiws today', 'page-views', W.today],
    ['pageviews yesterday', 'page-views', W.yesterday],
    ['checkout yesterday', 'checkout.started', W.yesterday],
    ['jobs last week', 'jobs.processed', W.lastWeek],
    ['Sign-Ups today', 'signups', W.today],
  ]
  for (const [q, stat, x] of typos) add({ q, op: 'aggregate', stat, window: x, numbers: sumOf(o, stat, x), tags: ['typo'] })
  add({
    q: 'avrage cpu usage yesterday',
    op: 'aggregate',
    stat: 'cpu_usage',
    window: W.yesterday,
    numbers: avgOf(o, 'cpu_usage', W.yesterday),
    tags: ['typo'],
  })
  add({
    q: 'qeue depth yesterday',
    op: 'aggregate',
    stat: 'queue_depth',
    window: W.yesterday,
    numbers: avgOf(o, 'queue_depth', W.yesterday),
    tags: ['typo'],
  })
  add({
    q: 'disk free yesterday',
    op: 'aggregate',
    stat: 'disk.free_gb',
    window: W.yesterday,
    numbers: avgOf(o, 'disk.free_gb', W.yesterday),
    tags: ['typo'],
  })

  // ---- breakdowns in hourly or daily buckets: every bucket in data, the answer grounded
  const bucketsOf = (stat: string, x: Window, slot: number) => {
    const out: Array<{ t: number; value: number }> = []
    for (let t = Math.floor(x.from / slot) * slot; t < x.to; t += slot) {
      const part = { from: Math.max(t, x.from), to: Math.min(t + slot, x.to) }
      const n = o.count(stat, part)
      if (o.kinds.get(stat) === 'counter') out.push({ t, value: o.sum(stat, part) })
      else if (n) out.push({ t, value: o.avg(stat, part) })
    }
    return out
  }
  const breakdowns: Array<[string, string, Window, number]> = [
    ['errors in the last 2 days by hour', 'errors', W.days(2), HOUR],
    ['errors in the last 2 days by day', 'errors', W.days(2), DAY],
    ['hourly orders yesterday', 'orders', W.yesterday, HOUR],
    ['signups per day this week', 'signups', W.thisWeek, DAY],
    ['average cpu usage by hour today', 'cpu_usage', W.today, HOUR],
    ['revenue day by day last week', 'revenue', W.lastWeek, DAY],
  ]
  for (const [q, stat, x, slot] of breakdowns) {
    const bs = bucketsOf(stat, x, slot)
    const whole = bs.filter((b) => b.t >= x.from && b.t + slot <= x.to)
    const numbers =
      bs.length <= 12
        ? bs.map((b) => b.value)
        : [
            Math.max(...bs.map((b) => b.value)),
            Math.min(...(whole.length ? whole : bs).map((b) => b.value)),
            ...(o.kinds.get(stat) === 'counter' ? [o.sum(stat, x)] : []),
          ]
    add({ q, op: 'breakdown', stat, window: x, buckets: bs.length, numbers, tags: ['breakdown', slot === HOUR ? 'by hour' : 'by day'] })
  }

  // ---- percentiles of gauges: nearest rank of the raw readings, within the sketches' 1 %
  const percentiles: Array<[string, string, Window, number]> = [
    ['p95 of cpu usage yesterday', 'cpu_usage', W.yesterday, 0.95],
    ['median api latency last week', 'api.latency', W.lastWeek, 0.5],
    ['api latency p99 yesterday', 'api.latency', W.yesterday, 0.99],
    ['p95 api latency yesterday', 'api.latency', W.yesterday, 0.95],
    ['p99 of api.latency last 7 days', 'api.latency', W.days(7), 0.99],
    ['median queue depth this week', 'queue_depth', W.thisWeek, 0.5],
    ['90th percentile of active users in the last 6 hours', 'active users', W.hours(6), 0.9],
  ]
  for (const [q, stat, x, p] of percentiles)
    add({ q, op: 'aggregate', stat, window: x, numbers: [o.percentile(stat, x, p)], within: 0.01, tags: ['gauge percentile'] })

  // ---- declines whose reason must be true
  const reasoned: Array<[string, RegExp, number?]> = [
    ['p95 of orders yesterday', /only gauges have percentiles/i],
    ['median signups last week', /only gauges have percentiles/i],
    ['p95 api latency today vs yesterday', /one period at a time/i],
    ['how many zeppelin launches yesterday?', /no stat is named like/i, 3],
    ['average rainfall in the last 6 hours', /no stat is named like/i, 3],
    ['errors by minute yesterday', /by hour or by day/i],
    ['orders in the last 30 days by hour', /at most a week/i],
  ]
  for (const [q, reason, names] of reasoned) add({ q, op: 'decline', reason, namesCandidates: names, tags: ['decline', 'true reason'] })

  // ---- tags (docs/decisions.md §24): a filter narrows the stat to its matching series, "by host" answers per value
  const groupNumbers = (stat: string, key: string, values: string[], x: Window) => [
    ...values.map((v) => o.value(`${stat}{${key}=${v}}`, x)),
    o.value(stat, x),
  ]
  const tagged: Case[] = [
    {
      q: 'requests yesterday by host',
      op: 'aggregate',
      stat: 'requests',
      window: W.yesterday,
      numbers: groupNumbers('requests', 'host', ['web1', 'web2', 'web3'], W.yesterday),
      says: /host=web1/,
      tags: ['tags', 'group by'],
    },
    {
      q: 'how many requests per host last week',
      op: 'aggregate',
      stat: 'requests',
      window: W.lastWeek,
      numbers: groupNumbers('requests', 'host', ['web1', 'web2', 'web3'], W.lastWeek),
      tags: ['tags', 'group by'],
    },
    {
      q: 'average response.ms by region yesterday',
      op: 'aggregate',
      stat: 'response.ms',
      window: W.yesterday,
      numbers: groupNumbers('response.ms', 'region', ['eu', 'us'], W.yesterday),
      says: /region=eu/,
      tags: ['tags', 'group by', 'gauge'],
    },
    ...(
      [
        ['requests on host web1 yesterday', 'requests{host=web1}', W.yesterday],
        ['total requests for host=web2 last week', 'requests{host=web2}', W.lastWeek],
        ['requests on web3 today', 'requests{host=web3}', W.today],
        ['requests where host is web2 in the last 6 hours', 'requests{host=web2}', W.hours(6)],
        ['response.ms for region=us yesterday', 'response.ms{region=us}', W.yesterday],
        ['average response.ms on host web1 and region eu last week', 'response.ms{host=web1,region=eu}', W.lastWeek],
      ] as const
    ).map(
      ([q, series, x]): Case => ({
        q,
        op: 'aggregate',
        stat: series.slice(0, series.indexOf('{')),
        window: x,
        numbers: o.kindOf(series) === 'counter' ? [o.sum(series, x)] : [o.avg(series, x)],
        says: new RegExp(series.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
        tags: ['tags', 'filter'],
      }),
    ),
    (() => {
      const p = o.peak('requests{host=web2}', W.yesterday, HOUR, 'desc')
      return {
        q: 'when did requests on host web2 peak yesterday',
        op: 'peak',
        stat: 'requests',
        window: W.yesterday,
        t: p.t,
        numbers: [p.value],
        tags: ['tags', 'filter', 'peak'],
      } satisfies Case
    })(),
    {
      q: 'requests by host yesterday vs the day before yesterday',
      op: 'decline',
      reason: /figure per tag value is given for a total/,
      tags: ['tags', 'decline'],
    },
    {
      q: 'requests on host web9 yesterday',
      op: 'decline',
      reason: /no series of the stat asked about has that tag value/,
      tags: ['tags', 'decline'],
    },
    { q: 'orders by host yesterday', op: 'decline', reason: /has no tags/, tags: ['tags', 'decline'] },
  ]
  for (const c of tagged) add(c)

  // ---- weekends: the latest one over, and this one (answered so far on a weekend, declined with why on a weekday)
  add({
    q: 'orders last weekend',
    op: 'aggregate',
    stat: 'orders',
    window: W.lastWeekend,
    numbers: [o.sum('orders', W.lastWeekend)],
    tags: ['weekend'],
  })
  add(
    W.thisWeekend
      ? {
          q: 'orders this weekend',
          op: 'aggregate',
          stat: 'orders',
          window: W.thisWeekend,
          numbers: [o.sum('orders', W.thisWeekend)],
          tags: ['weekend'],
        }
      : { q: 'orders this weekend', op: 'decline', reason: /this weekend has not begun yet/, tags: ['weekend', 'decline'] },
  )
  const latest = W.thisWeekend ?? W.lastWeekend
  add({
    q: 'how many signups over the weekend',
    op: 'aggregate',
    stat: 'signups',
    window: latest,
    numbers: [o.sum('signups', latest)],
    tags: ['weekend'],
  })

  // ---- questions it must decline (unknown stats, ambiguous names, forecasts, causes, nonsense)
  const declines: Array<[string, string[]?]> = [
    ['how many widgets were sold yesterday?'],
    ['total sales last week'],
    ['average temperature today'],
    ['how many refunds this month'],
    ['what is the weather in Paris'],
    ['average latncy today', ['api.latency', 'api.latency.p95']],
    ['latancy yesterday', ['api.latency', 'api.latency.p95']],
    ['how many signups will we get tomorrow?'],
    ['predict orders for next week'],
    ['why did errors spike yesterday?'],
    ['forecast revenue for next month'],
    ['hello'],
    ['how many things happened'],
    ['what is the meaning of life'],
    ['how many customers churned last month'],
    ['show me the p99 of database connections'],
    ['memory usage yesterday'],
    ['explain the drop in orders'],
    ['tell me a joke'],
    ['compare signups and orders yesterday'],
  ]
  for (const [q, candidates] of declines) add({ q, op: 'decline', candidates, tags: ['decline'] })
  return cases
}
