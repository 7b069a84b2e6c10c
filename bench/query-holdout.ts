// Held-out questions: written with the corpus, never run while the engine was
// developed, reported separately by the bench (BENCH_QUERY_HOLDOUT=0 leaves
// them out). Same expectations and oracle as query-corpus.ts.
import { buildCorpus, compared, windows, type Case } from './query-corpus.js'
import type { Oracle, Window } from './query-seed.js'

export function buildHoldout(o: Oracle, now: number): Case[] {
  const W = windows(now)
  const out: Case[] = []
  const agg = (q: string, stat: string, x: Window) =>
    out.push({
      q,
      op: 'aggregate',
      stat,
      window: x,
      numbers: o.kinds.get(stat) === 'counter' ? [o.sum(stat, x)] : [o.avg(stat, x), o.min(stat, x), o.max(stat, x), o.count(stat, x)],
      holdout: true,
      tags: ['holdout aggregate'],
    })
  agg('what were total signups over the past 3 days?', 'signups', W.days(3))
  agg('orders so far today', 'orders', W.today)
  agg('Revenue for last week please', 'revenue', W.lastWeek)
  agg('how many page views in the last 48 hours', 'page-views', W.hours(48))
  agg('errors yesterday', 'errors', W.yesterday)
  agg('payments failed this week', 'payments.failed', W.thisWeek)
  agg(`jobs.processed since ${W.weekdayName(W.D(-3))}`, 'jobs.processed', W.since(W.D(-3)))
  agg('tell me the checkout.started count for yesterday', 'checkout.started', W.yesterday)
  agg('average cpu over the last 4 hours', 'cpu_usage', W.hours(4))
  agg('what was api latency like last week', 'api.latency', W.lastWeek)
  agg('queue depth over the past week', 'queue_depth', W.days(7))
  agg('active users yesterday', 'active users', W.yesterday)
  agg(`signups on ${W.iso(W.D(-12))}`, 'signups', W.day(12))
  agg(`how many orders between ${W.short(W.D(-6))} and ${W.short(W.D(-4))}`, 'orders', W.range(W.D(-6), W.D(-3)))
  agg('sigups in the last 24 hours', 'signups', W.hours(24))
  agg('api latency p95 today', 'api.latency.p95', W.today)
  agg('latncy p95 yesterday', 'api.latency.p95', W.yesterday)

  const pct = (q: string, stat: string, x: Window, p: number) =>
    out.push({
      q,
      op: 'aggregate',
      stat,
      window: x,
      numbers: [o.percentile(stat, x, p)],
      within: 0.01,
      holdout: true,
      tags: ['holdout percentile'],
    })
  pct('p90 cpu_usage in the last 12 hours', 'cpu_usage', W.hours(12), 0.9)
  pct('what was the median disk.free_gb last month', 'disk.free_gb', W.lastMonth, 0.5)
  pct('tp99 api latency over the past 3 days', 'api.latency', W.days(3), 0.99)

  const cmp = (q: string, stat: string, a: Window, b: Window) =>
    out.push({ q, op: 'compare', stat, window: a, compareTo: b, ...compared(o, stat, a, b), holdout: true, tags: ['holdout compare'] })
  cmp('how do signups this week compare with last week?', 'signups', W.thisWeek, W.thisWeekBefore)
  cmp('revenue yesterday vs the day before yesterday', 'revenue', W.yesterday, W.dayBefore)
  cmp('did orders drop today?', 'orders', W.today, W.todayBefore)
  cmp('has api latency gone up this week', 'api.latency', W.thisWeek, W.thisWeekBefore)
  cmp('change in page views over the last 7 days', 'page-views', W.days(7), W.daysBefore(7))

  const peak = (q: string, stat: string, x: Window, order: 'desc' | 'asc' = 'desc') => {
    const p = o.peak(stat, x, W.slotFor(x), order)
    out.push({ q, op: 'peak', stat, window: x, t: p.t, numbers: [p.value], holdout: true, tags: ['holdout peak'] })
  }
  peak('at what hour did signups peak yesterday', 'signups', W.yesterday)
  peak('when were errors highest in the last 24 hours', 'errors', W.hours(24))
  peak('busiest day for revenue last month', 'revenue', W.lastMonth)
  peak('when did cpu usage spike this week', 'cpu_usage', W.thisWeek)

  const r = o.growth(W.yesterday, W.dayBefore, 'desc')[0]
  out.push({
    q: 'which stat grew the most yesterday',
    op: 'rank',
    window: W.yesterday,
    compareTo: W.dayBefore,
    top: r.stat,
    numbers: [r.value, r.previous, r.pct],
    holdout: true,
    tags: ['holdout rank'],
  })
  const v = o.rank('counter', W.lastWeek, 'desc')[0]
  out.push({
    q: 'top stats last week',
    op: 'rank',
    window: W.lastWeek,
    top: v.stat,
    numbers: [v.value],
    holdout: true,
    tags: ['holdout rank'],
  })

  for (const q of [
    'how many leads did we get yesterday',
    'average response size today',
    'will errors go up tomorrow',
    'what caused the error spike',
    'bandwidth last week',
    'how many invoices were paid this month',
    'disk usage forecast',
  ]) {
    out.push({ q, op: 'decline', holdout: true, tags: ['holdout decline'] })
  }
  return out
}

export { buildCorpus }
