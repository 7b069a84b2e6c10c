// Answers from templates: one function per operation retrieves what it needs
// from the rollups and writes a one- or two-sentence draft whose every number
// is a record in `data` (derived figures included).
import type { Db } from '../db.js'
import { Clock } from '../time/clock.js'
import { Draft } from './draft.js'
import type { ParsedIntent } from './intent.js'
import type { StatRef } from './match.js'
import type { Span } from './periods.js'
import { idsOfStat, latest, peakSlot, slots, summarise, type Summary } from './retrieve.js'
import type { DataRecord } from './schema.js'
import { spanPercentiles } from '../stats/percentiles.js'

const iso = (d: Date) => d.toISOString()
const AGG_WORD: Record<string, string> = {
  sum: 'total',
  avg: 'average',
  min: 'lowest reading',
  max: 'highest reading',
  count: 'number of observations',
}

/** The aggregation answered for a stat: the one asked for where it fits the kind, else the kind's default. */
function aggFor(stat: StatRef, asked: ParsedIntent['agg']): 'sum' | 'avg' | 'min' | 'max' | 'count' {
  if (asked === 'count') return 'count'
  if (stat.kind === 'counter') return 'sum'
  return asked === 'min' || asked === 'max' ? asked : 'avg'
}

function summaryValue(s: Summary, agg: 'sum' | 'avg' | 'min' | 'max' | 'count'): number | null {
  if (agg === 'count') return s.n
  if (!s.n) return null
  return agg === 'min' ? s.min : agg === 'max' ? s.max : s.value
}

function retrieved(
  stat: StatRef,
  agg: string,
  period: 'window' | 'compare_to' | 'context',
  span: Span,
  s: Summary,
  value: number | null,
): DataRecord {
  return {
    type: 'retrieved',
    stat: stat.name,
    stat_kind: stat.kind,
    agg,
    period,
    from: iso(span.from),
    to: iso(span.to),
    value,
    n: s.n,
    ...(stat.kind === 'gauge' && s.n && agg === 'avg' ? { min: s.min!, max: s.max! } : {}),
  }
}

/** Totals, averages, minima, maxima, counts and latest values of one or more stats over one window. */
export async function aggregateAnswer(sql: Db, intent: ParsedIntent): Promise<Draft> {
  const d = new Draft(intent.zone)
  if (intent.agg === 'last') {
    const sentences: string[] = []
    for (const stat of intent.stats) {
      const last = await latest(sql, stat, intent.window)
      const name = d.stat(stat.name, stat.kind)
      const where = intent.window ? ` ${d.period(intent.window.label)}` : ''
      if (!last) {
        sentences.push(`${name} has no recorded value${where}.`)
        continue
      }
      d.record({ type: 'retrieved', stat: stat.name, stat_kind: stat.kind, agg: 'last', t: last.t, value: last.value, n: last.n })
      sentences.push(`The latest ${name} value${where} is ${d.num(last.value, `the latest value of ${name}`)}, recorded ${d.time(last.t)}.`)
    }
    d.text = sentences.join(' ')
    if (!d.data.length) d.source = 'template'
    return d
  }
  const w = intent.window!
  const sums = await summarise(sql, intent.stats, w)
  const parts: string[] = []
  for (const stat of intent.stats) {
    const s = sums.get(stat.id)!
    const agg = aggFor(stat, intent.agg)
    const name = d.stat(stat.name, stat.kind)
    const p = d.period(w.label)
    const value = summaryValue(s, agg)
    if (value === null) {
      parts.push(stat.kind === 'counter' ? `No ${name} were recorded ${p}.` : `${name} has no readings ${p}.`)
      continue
    }
    d.record(retrieved(stat, agg, 'window', w, s, value))
    const note = stat.kind === 'gauge' && intent.agg === 'sum' ? ` (${name} is a gauge, so this is its average)` : ''
    if (agg === 'count') parts.push(`${name} recorded ${d.num(s.n, `observations of ${name}`)} observations ${p}.`)
    else if (agg === 'sum') parts.push(`${name} totalled ${d.num(value, `total of ${name}`)} ${p}.`)
    else if (agg === 'avg') {
      parts.push(
        `${name} averaged ${d.num(value, `average of ${name}`)} ${p}${note} (lowest ${d.num(s.min!, `lowest reading of ${name}`)}, highest ${d.num(s.max!, `highest reading of ${name}`)}, ${d.num(s.n, `readings of ${name}`)} readings).`,
      )
    } else parts.push(`The ${AGG_WORD[agg]} of ${name} ${p} was ${d.num(value, `${AGG_WORD[agg]} of ${name}`)}.`)
  }
  d.text = parts.join(' ')
  if (!d.data.length) d.source = 'template'
  return d
}

/** At most this many groups of a "by host" answer are named; the rest are given together. */
export const MAX_GROUPS_SHOWN = 20

/**
 * One figure per value of a tag over one window ("requests yesterday by host", docs/decisions.md §24): each value's
 * series read as one, largest first, and the stat as a whole beside them. Series without the tag are left out of the
 * groups (said so) but not out of the whole.
 */
export async function groupAnswer(sql: Db, intent: ParsedIntent): Promise<Draft> {
  const d = new Draft(intent.zone)
  const stat = intent.stats[0]
  const key = intent.groupBy!
  const w = intent.window!
  const agg = aggFor(stat, intent.agg)
  const byValue = new Map<string, string[]>()
  let without = 0
  for (const t of stat.tagged ?? []) {
    const v = t.tags[key]
    if (v === undefined) {
      without++
      continue
    }
    let ids = byValue.get(v)
    if (!ids) byValue.set(v, (ids = []))
    ids.push(t.id)
  }
  const base = stat.base ?? stat.name
  const groups: StatRef[] = [...byValue].map(([v, ids]) => ({
    id: ids[0],
    name: `${stat.name}{${key}=${v}}`,
    kind: stat.kind,
    series: ids,
    base,
  }))
  // Two reads: a series is read under one owner per read, and the whole holds every group's series.
  const [sums, wholeSums] = await Promise.all([summarise(sql, groups, w), summarise(sql, [stat], w)])
  const rows = groups
    .map((g, i) => ({ g, value: [...byValue.keys()][i], s: sums.get(g.id)!, x: summaryValue(sums.get(g.id)!, agg) }))
    .filter((r) => r.x !== null)
    .sort((a, b) => b.x! - a.x! || (a.value < b.value ? -1 : 1))
  const name = d.stat(stat.name, stat.kind)
  const p = d.period(w.label)
  const word = agg === 'sum' ? 'total' : AGG_WORD[agg]
  if (!rows.length) {
    d.text = stat.kind === 'counter' ? `No ${name} were recorded ${p}.` : `${name} has no readings ${p}.`
    d.source = 'template'
    return d
  }
  const shown = rows.slice(0, MAX_GROUPS_SHOWN).map((r) => {
    d.record(retrieved(r.g, agg, 'window', w, r.s, r.x))
    return `${d.stat(`${key}=${r.value}`, stat.kind)} ${d.num(r.x!, `${word} of ${r.g.name}`)}`
  })
  const parts = [`${word[0].toUpperCase()}${word.slice(1)} of ${name} ${p}, by ${d.stat(key, stat.kind)}: ${shown.join(', ')}.`]
  const rest = rows.slice(MAX_GROUPS_SHOWN)
  if (rest.length) {
    const i = d.record({ type: 'derived', agg: 'count', value: rest.length })
    parts.push(`${d.num(d.data[i].value!, 'how many other values')} other values are not listed.`)
  }
  const whole = wholeSums.get(stat.id)!
  const x = summaryValue(whole, agg)
  if (x !== null && rows.length > 1) {
    d.record(retrieved(stat, agg, 'window', w, whole, x))
    parts.push(`All of ${name} together: ${d.num(x, `${word} of ${name}`)}.`)
  }
  if (without) parts.push(`Series without that tag are left out of the values above.`)
  d.text = parts.join(' ')
  return d
}

/** "median" for p50, else the percentile's own key (p95, p99.9): no digits the verifier would read as a claim. */
/** A sketch's relative error on a percentile (docs/decisions.md §20). */
const PERCENTILE_ERROR = 0.01
const percentileWord = (p: number) => (p === 50 ? 'median' : `p${p}`)

/**
 * Percentiles of one or more gauges over one window (decision 20), from the stats' percentile reader: exact under
 * an hour, from the hour sketches merged with the raw points of the partial hours beyond, within 1 %. The count
 * of readings comes from the rollups, as the averages' does.
 */
export async function percentileAnswer(sql: Db, intent: ParsedIntent): Promise<Draft> {
  const d = new Draft(intent.zone)
  const w = intent.window!
  const ps = intent.percentiles!
  const sums = await summarise(sql, intent.stats, w)
  const parts: string[] = []
  const sketched = w.to.getTime() - w.from.getTime() >= 3_600_000
  for (const stat of intent.stats) {
    const s = sums.get(stat.id)!
    const name = d.stat(stat.name, stat.kind)
    const p = d.period(w.label)
    const values = s.n
      ? await spanPercentiles(
          sql,
          idsOfStat(stat),
          w.from,
          w.to,
          ps.map((x) => ({ key: `p${x}`, q: x / 100 })),
        )
      : null
    if (!values) {
      parts.push(`${name} has no readings ${p}.`)
      continue
    }
    const shown = ps.map((x, i) => {
      d.record({
        type: 'retrieved',
        stat: stat.name,
        stat_kind: stat.kind,
        agg: `p${x}`,
        period: 'window',
        from: iso(w.from),
        to: iso(w.to),
        value: values[i],
        n: s.n,
      })
      // From a sketch the value is within 1 %: shown without the decimals that error does not support.
      return {
        word: percentileWord(x),
        value: d.num(values[i], `the ${percentileWord(x)} of ${name}`, sketched ? { relError: PERCENTILE_ERROR } : {}),
      }
    })
    const readings = `${d.num(s.n, `readings of ${name}`)} readings`
    parts.push(
      shown.length === 1
        ? `The ${shown[0].word} of ${name} ${p} was ${shown[0].value} (${readings}).`
        : `${name} ${p}: ${shown.map((x) => `${x.word} ${x.value}`).join(', ')} (${readings}).`,
    )
  }
  // Sketch values are within one percent of the exact ones; said once, in words (a digit here would be a claim).
  if (sketched && d.data.length) parts.push('Percentiles over an hour or more come from sketches, within one percent of exact.')
  d.text = parts.join(' ')
  if (!d.data.length) d.source = 'template'
  return d
}

/** One stat over two periods: both values, the difference and the percentage change. */
export async function compareAnswer(sql: Db, intent: ParsedIntent): Promise<Draft> {
  const d = new Draft(intent.zone)
  const stat = intent.stats[0]
  const w = intent.window!
  let c = intent.compareTo!
  const [a, b] = await Promise.all([summarise(sql, [stat], w), summarise(sql, [stat], c)])
  const agg = aggFor(stat, intent.agg)
  const sa = a.get(stat.id)!
  let sb = b.get(stat.id)!
  const va = summaryValue(sa, agg)
  let vb = summaryValue(sb, agg)
  // A gauge with no reading in the earlier period's same stretch (yesterday before this hour) is set against the
  // whole earlier period instead, saying so, rather than declining: a person would compare with what there is.
  let whole = false
  if (vb === null && stat.kind === 'gauge' && intent.context && intent.stretch) {
    const sc = (await summarise(sql, [stat], intent.context)).get(stat.id)!
    const vc = summaryValue(sc, agg)
    if (vc !== null) {
      c = intent.context
      sb = sc
      vb = vc
      whole = true
    }
  }
  const name = d.stat(stat.name, stat.kind)
  const pw = d.period(w.label)
  const pc = d.period(c.label)
  const what = agg === 'sum' ? 'total' : AGG_WORD[agg]
  // A counter with no points in a period did record zero of it; a gauge without readings has no value.
  const zeroA = va === null && stat.kind === 'counter'
  const zeroB = vb === null && stat.kind === 'counter'
  if ((va === null && !zeroA) || (vb === null && !zeroB) || (zeroA && zeroB)) {
    d.source = 'template'
    d.text =
      zeroA && zeroB
        ? `No ${name} were recorded ${pw} or ${pc}, so there is nothing to compare.`
        : `${name} has no readings ${va === null ? pw : pc}, so the two periods cannot be compared.`
    return d
  }
  const x = va ?? 0
  const y = vb ?? 0
  const ia = d.record(retrieved(stat, agg, 'window', w, sa, x))
  const ib = d.record(retrieved(stat, agg, 'compare_to', c, sb, y))
  const diff = x - y
  d.record({ type: 'derived', agg: 'difference', of: [ia, ib], value: diff })
  let change = ''
  if (y !== 0) {
    const pct = (diff / Math.abs(y)) * 100
    d.record({ type: 'derived', agg: 'pct_change', of: [ia, ib], value: pct })
    change =
      diff === 0
        ? ', unchanged'
        : `, ${diff > 0 ? 'up' : 'down'} ${d.num(Math.abs(diff), 'the size of the change')} (${d.num(pct, 'the percentage change', { percent: true, signed: true })})`
  } else {
    change = `, up ${d.num(diff, 'the size of the change')} from nothing (no percentage change from zero)`
  }
  d.text = `The ${what} of ${name} was ${d.num(x, `${what} in the first period`)} ${pw} against ${d.num(y, `${what} in the second period`)} ${pc}${change}.`
  if (whole) {
    d.text = `${name} has no readings ${d.period(intent.compareTo!.label)}, so ${pw} is set against ${pc} instead. ${d.text}`
  } else if (intent.context && intent.stretch) {
    // The same elapsed stretch is compared; the whole earlier period is context, never the comparison.
    const ctx = intent.context
    const sc = (await summarise(sql, [stat], ctx)).get(stat.id)!
    const vc = summaryValue(sc, agg) ?? (stat.kind === 'counter' ? 0 : null)
    d.text = `Over the same stretch of each period (${d.period(intent.stretch)}), the ${what} of ${name} was ${d.num(x, `${what} in the first period`)} ${pw} against ${d.num(y, `${what} in the second period`)} ${pc}${change}.`
    if (vc !== null) {
      d.record(retrieved(stat, agg, 'context', ctx, sc, vc))
      d.text += ` For context, ${d.period(ctx.label)} ${agg === 'sum' ? 'totalled' : `had ${AGG_WORD[agg] === 'average' ? 'an' : 'a'} ${AGG_WORD[agg]} of`} ${d.num(vc, `${what} of the whole earlier period`)}.`
    }
  }
  return d
}

/** Stats ordered by their value over a window, or by their percentage change against the previous period. */
export async function rankAnswer(sql: Db, intent: ParsedIntent, top = 3): Promise<Draft> {
  const d = new Draft(intent.zone)
  const pool = intent.pool!
  const w = intent.window!
  const p = d.period(w.label)
  const desc = intent.order !== 'asc'
  const kindWord = pool.every((s) => s.kind === 'counter') ? 'counters' : pool.every((s) => s.kind === 'gauge') ? 'gauges' : 'stats'
  if (intent.agg === 'change') {
    const c = intent.compareTo!
    const pc = d.period(c.label)
    const [a, b] = await Promise.all([summarise(sql, pool, w), summarise(sql, pool, c)])
    const rows = pool
      .map((s) => {
        const agg = aggFor(s, null)
        return { s, agg, sa: a.get(s.id)!, sb: b.get(s.id)!, x: summaryValue(a.get(s.id)!, agg), y: summaryValue(b.get(s.id)!, agg) }
      })
      .filter((r) => r.y !== null && r.y !== 0 && (r.x !== null || r.s.kind === 'counter'))
      .map((r) => ({ ...r, x: r.x ?? 0, pct: (((r.x ?? 0) - r.y!) / Math.abs(r.y!)) * 100 }))
      .sort((l, r) => (desc ? r.pct - l.pct : l.pct - r.pct) || l.s.name.localeCompare(r.s.name))
    const best = rows[0]
    if (!best || (desc ? best.pct <= 0 : best.pct >= 0)) {
      d.source = 'template'
      d.text = `None of your ${kindWord} ${desc ? 'grew' : 'fell'} ${p} compared with ${pc}.`
      return d
    }
    const parts = rows
      .slice(0, top)
      .filter((r) => (desc ? r.pct > 0 : r.pct < 0))
      .map((r) => {
        const ia = d.record(retrieved(r.s, r.agg, 'window', w, r.sa, r.x))
        const ib = d.record(retrieved(r.s, r.agg, 'compare_to', c, r.sb, r.y!))
        d.record({ type: 'derived', agg: 'pct_change', of: [ia, ib], value: r.pct })
        return {
          name: d.stat(r.s.name, r.s.kind),
          x: d.num(r.x, 'value in the first period'),
          y: d.num(r.y!, 'value in the second period'),
          pct: d.num(r.pct, 'percentage change', { percent: true, signed: true }),
        }
      })
    const [first, ...others] = parts
    d.text =
      `Comparing ${p} with ${pc}, ${first.name} ${desc ? 'grew' : 'fell'} most: from ${first.y} to ${first.x} (${first.pct}).` +
      (others.length ? ` Next: ${others.map((o) => `${o.name} (${o.pct})`).join(', ')}.` : '')
    return d
  }
  const sums = await summarise(sql, pool, w)
  const rows = pool
    .map((s) => ({ s, sum: sums.get(s.id)!, v: summaryValue(sums.get(s.id)!, aggFor(s, intent.agg)) }))
    .filter((r) => r.v !== null)
    .sort((l, r) => (desc ? r.v! - l.v! : l.v! - r.v!) || l.s.name.localeCompare(r.s.name))
  if (!rows.length) {
    d.source = 'template'
    d.text = `None of your ${kindWord} recorded anything ${p}.`
    return d
  }
  const what = intent.agg === 'avg' ? 'average' : 'total'
  const parts = rows.slice(0, top).map((r) => {
    d.record(retrieved(r.s, aggFor(r.s, intent.agg), 'window', w, r.sum, r.v))
    return { name: d.stat(r.s.name, r.s.kind), v: d.num(r.v!, `${what} of a stat`) }
  })
  const [first, ...others] = parts
  d.text =
    `Of your ${kindWord}, ${first.name} had the ${desc ? 'highest' : 'lowest'} ${what} ${p}: ${first.v}.` +
    (others.length ? ` Next: ${others.map((o) => `${o.name} (${o.v})`).join(', ')}.` : '')
  return d
}

/** When a stat was highest (or lowest) in the window: the busiest slot of a counter, the extreme reading of a gauge. */
export async function peakAnswer(sql: Db, intent: ParsedIntent): Promise<Draft> {
  const d = new Draft(intent.zone)
  const stat = intent.stats[0]
  const w = intent.window!
  const slot = peakSlot(w)
  const desc = intent.order !== 'asc'
  const all = await slots(sql, stat, w, slot, intent.zone)
  // The lowest slot must be a whole one: the window's first or running last slot would read low for want of time.
  const pool = desc ? all : all.filter((s) => s.complete)
  const name = d.stat(stat.name, stat.kind)
  const p = d.period(w.label)
  if (!pool.length) {
    d.source = 'template'
    d.text = `${name} has no ${stat.kind === 'counter' ? 'counts' : 'readings'} ${p}, so it has no ${desc ? 'peak' : 'low point'}.`
    return d
  }
  const score = (s: (typeof pool)[number]) => (stat.kind === 'counter' ? s.value : desc ? s.max : s.min)
  const pick = (buckets: typeof pool) => buckets.reduce((a, b) => ((desc ? score(b) > score(a) : score(b) < score(a)) ? b : a))
  const agg = stat.kind === 'counter' ? 'sum' : desc ? 'max' : 'min'
  /** The chosen bucket as a record in data, so the number the answer gives is grounded. */
  const recordBucket = (b: (typeof pool)[number], seconds: number) =>
    d.record({
      type: 'retrieved',
      stat: stat.name,
      stat_kind: stat.kind,
      agg,
      period: 'window',
      from: iso(w.from),
      to: iso(w.to),
      t: b.t,
      bucket_seconds: seconds,
      value: score(b),
      n: b.n,
    })
  const best = pick(pool)
  const value = score(best)
  recordBucket(best, slot)
  const unit = slot === 60 ? 'minute' : slot === 3_600 ? 'hour' : 'day'
  const when = slot === 86_400 ? `on ${d.time(best.t, false)}` : `in the ${unit} starting ${d.time(best.t)}`
  const v = d.num(value, stat.kind === 'counter' ? `the ${unit}'s total` : `the ${desc ? 'highest' : 'lowest'} reading`)
  d.text =
    stat.kind === 'counter'
      ? `${name} ${desc ? 'peaked' : 'was lowest'} ${when} with ${v}, its ${desc ? 'busiest' : 'quietest'} ${unit} ${p}.`
      : `${name} ${desc ? 'peaked' : 'was lowest'} ${when} with a reading of ${v}, its ${desc ? 'highest' : 'lowest'} ${p}.`
  if (slot === 86_400) {
    // A day alone leaves "when" half answered: the hour within it is said too (its own record, so it is grounded).
    const dayEnd = Math.min(best.t + 86_400, w.to.getTime() / 1000)
    const from = Math.max(best.t, w.from.getTime() / 1000)
    const hours = (
      await slots(sql, stat, { from: new Date(from * 1000), to: new Date(dayEnd * 1000), label: w.label }, 3_600, intent.zone)
    ).filter((h) => h.n > 0 || stat.kind === 'counter')
    const hourPool = desc ? hours : hours.filter((h) => h.complete)
    if (hourPool.length) {
      const hb = pick(hourPool)
      const hv = score(hb)
      recordBucket(hb, 3_600)
      d.text +=
        stat.kind === 'counter'
          ? ` Its ${desc ? 'busiest' : 'quietest'} hour that day started ${d.time(hb.t)}, with ${d.num(hv, "the hour's total")}.`
          : ` The ${desc ? 'highest' : 'lowest'} reading came in the hour starting ${d.time(hb.t)}.`
    }
  }
  return d
}

/**
 * One stat in hourly or daily buckets of the question's time zone over the window (a day is 23 to 25
 * hours where clocks change): every bucket is a record in data (a
 * counter's empty bucket is a 0, a gauge's is left out), the answer lists them when they are few and
 * otherwise gives the total or average, the highest and the lowest bucket. The first and last bucket
 * may be cut by the window; each record's from and to say so.
 */
export async function breakdownAnswer(sql: Db, intent: ParsedIntent, listUpTo = 12): Promise<Draft> {
  const d = new Draft(intent.zone)
  const stat = intent.stats[0]
  const w = intent.window!
  const slot = intent.bucket!
  const unit = slot === 3_600 ? 'hour' : 'day'
  const name = d.stat(stat.name, stat.kind)
  const p = d.period(w.label)
  const got = new Map((await slots(sql, stat, w, slot, intent.zone)).map((s) => [s.t, s]))
  const fromS = w.from.getTime() / 1000
  const toS = w.to.getTime() / 1000
  const clock = new Clock(intent.zone ?? 'UTC')
  const buckets: Array<{ t: number; value: number; min: number; max: number; n: number; complete: boolean }> = []
  for (let t = clock.slotStart(fromS, slot); t < toS; t = clock.nextSlot(t, slot)) {
    const s = got.get(t)
    if (s) buckets.push(s)
    else if (stat.kind === 'counter')
      buckets.push({ t, value: 0, min: 0, max: 0, n: 0, complete: t >= fromS && clock.nextSlot(t, slot) <= toS })
  }
  if (!buckets.some((b) => b.n > 0)) {
    d.source = 'template'
    d.text = stat.kind === 'counter' ? `No ${name} were recorded ${p}.` : `${name} has no readings ${p}.`
    return d
  }
  const agg = intent.agg === 'min' || intent.agg === 'max' ? intent.agg : stat.kind === 'counter' ? 'sum' : 'avg'
  const pick = (b: (typeof buckets)[number]) => (agg === 'min' ? b.min : agg === 'max' ? b.max : b.value)
  const idx = buckets.map((b) =>
    d.record({
      type: 'retrieved',
      stat: stat.name,
      stat_kind: stat.kind,
      agg,
      period: 'window',
      from: iso(new Date(Math.max(b.t, fromS) * 1000)),
      to: iso(new Date(Math.min(clock.nextSlot(b.t, slot), toS) * 1000)),
      t: b.t,
      bucket_seconds: slot,
      value: pick(b),
      n: b.n,
      ...(agg === 'avg' ? { min: b.min, max: b.max } : {}),
    }),
  )
  const label = (b: (typeof buckets)[number]) => `${d.time(b.t, slot === 3_600)}${b.complete ? '' : ' (part)'}`
  const what = agg === 'sum' ? '' : ` (${AGG_WORD[agg]} of each ${unit})`
  if (buckets.length <= listUpTo) {
    d.text = `${name} ${p} by ${unit}${what}: ${buckets.map((b) => `${label(b)} ${d.num(pick(b), `the ${unit}'s ${AGG_WORD[agg]}`)}`).join(', ')}.`
    return d
  }
  // Too many to read out: the whole, the highest and the lowest whole bucket; every bucket is in data.
  const whole = buckets.filter((b) => b.complete)
  const pool = whole.length ? whole : buckets
  const hi = buckets.reduce((a, b) => (pick(b) > pick(a) ? b : a))
  const lo = pool.reduce((a, b) => (pick(b) < pick(a) ? b : a))
  let head = ''
  if (agg === 'sum') {
    const total = buckets.reduce((a, b) => a + b.value, 0)
    d.record({ type: 'derived', agg: 'sum', of: idx, value: total })
    head = `${d.num(total, 'the total of the buckets')} in all; `
  }
  d.text = `${name} ${p} by ${unit}${what}: ${head}highest ${label(hi)} with ${d.num(pick(hi), `the highest ${unit}`)}, lowest ${label(lo)} with ${d.num(pick(lo), `the lowest ${unit}`)}. Each ${unit}'s figure is in the data.`
  return d
}
