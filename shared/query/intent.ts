// The intent parser: a question and the account's stats in, a structured
// intent out (docs/decisions.md §13). It never guesses: a question it cannot
// read with confidence comes back as op "unknown" with the reason and the
// closest stats, and the engine answers that honestly.
import { defaultPeriod, findPeriods, type FoundPeriod, type Span } from './periods.js'
import { closestByName, findNamedStats, fuzzyMatch, isGrammarWord, rephrase, tokens, type Match, type StatRef } from './match.js'
import type { Intent } from './schema.js'

export type Op = Intent['op']
export type Agg = NonNullable<Intent['agg']>

export interface ParsedIntent {
  op: Op
  agg: Agg | null
  order?: 'desc' | 'asc'
  stats: StatRef[]
  window: Span | null
  compareTo?: Span
  /** A comparison of the same elapsed stretch: the whole earlier period, given beside it, and the stretch in words. */
  context?: Span
  stretch?: string
  matched: Match[]
  /** For a rank: the stats it ranks. */
  pool?: StatRef[]
  candidates?: string[]
  /** For a decline that names candidates: the question asked again about each (the page's "Did you mean" links). */
  suggestions?: Array<{ stat: string; query: string }>
  /** The candidates share nothing with the question's words: they are the account's stats, not near misses. */
  unlike?: boolean
  /** A breakdown: the bucket, an hour or a day. */
  bucket?: 3600 | 86400
  /** Declined because the question asks a counter for percentiles. */
  percentile?: boolean
  /** agg percentile: the percentiles asked, 0-100. */
  percentiles?: number[]
  reason?: string
  /** Declined because the question is outside what the engine answers (forecasts, causes). */
  unsupported?: boolean
  /** Declined because a period in the question could not be read. */
  unreadPeriod?: boolean
  /** The time zone its periods were read in, and its answer's buckets and times are shown in (UTC when absent). */
  zone?: string
  /** The tags a filter kept ("on host web1", "for host=web1"): the stats are narrowed to the series holding them. */
  filter?: Record<string, string>
  /** A tag key to answer one figure per value of ("by host"). */
  groupBy?: string
  /** When declined over tags: the stat and its tags as `key=value`, named in the answer (quoted, not read as claims). */
  tagValues?: string[]
  tagStat?: string
}

const has = (re: RegExp, s: string) => re.test(s)
const sameSpan = (a: Span, b: Span) => a.from.getTime() === b.from.getTime() && a.to.getTime() === b.to.getTime()
const UNSUPPORTED =
  /\b(forecast|predict(ed|ion)?|projection|will (there|we|it|be)|expect(ed)? to|why|cause[ds]?|reason|explain|correlat\w*|anomal\w*)\b/
const CHANGE_UP = /\b(grew|grow[ns]?|growth|increas\w*|rose|rise[ns]?|gain\w*|jump\w*|climb\w*|(go|goes|went|gone|is|was|are|were) up)\b/
const CHANGE_DOWN = /\b(drop\w*|fell|fall\w*|declin\w*|decreas\w*|shr[ai]nk\w*|(go|goes|went|gone|is|was|are|were) down)\b/
const CHANGE = /\b(chang\w*|mov(ed|ers?)|trend\w*|differ\w*|delta)\b/
const UNREAD_TIME =
  /\b(?:19|20)\d\d\b|\b(ago|weekends?|ytd|q[1-4]|h[12]|years?|months?|weeks?|days?|hours?|minutes?|mins?|night|tonight|morning|evening|afternoon|noon|midnight|jan(uary)?|feb(ruary)?|march|april|june|july|aug(ust)?|sept?(ember)?|oct(ober)?|nov(ember)?|dec(ember)?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|\d{1,2}(am|pm)|\d{1,2}:\d\d|\d{1,2}\/\d{1,2})\b/
// Percentiles of gauges (decision 20), read from the stats' percentile reader: asked for, they are answered or
// declined (a counter), never read as an average.
const PERCENTILE = /\b(p\d{1,2}(?:\.\d+)?|tp\d{2}|\d{1,2}(?:st|nd|rd|th) percentile|percentiles?|median|quantiles?)\b/
// A breakdown in hourly or daily buckets: "by hour", "per day", "hourly", "day by day".
const BREAKDOWN = /\b(?:by|per|each|every|for each|for every) (hour|day)\b|\b(hourly|daily)\b|\b(hour) by hour\b|\b(day) by day\b/
const BREAKDOWN_OTHER = /\b(?:by|per|each|every) (minute|week|month|quarter|year)\b|\b(weekly|monthly|yearly|quarterly)\b/
/** The most buckets a breakdown lists: a week of hours, a quarter of days (more is a chart, not an answer). */
export const MAX_BREAKDOWN = { 3600: 7 * 24 + 1, 86400: 93 } as const
const LOW = /\b(lowest|least|fewest|smallest|min|minimum|quietest|bottom|worst)\b/

/** The percentiles a percentile word asks for: p95 -> 95, tp99 -> 99, 95th percentile -> 95, median -> 50, "percentiles" -> 50, 95, 99. */
export function percentilesOf(word: string): number[] {
  if (word === 'median') return [50]
  const m = /^t?p(\d{1,2}(?:\.\d+)?)$/.exec(word) ?? /^(\d{1,2})(?:st|nd|rd|th) percentile$/.exec(word)
  return m ? [Number(m[1])] : [50, 95, 99]
}

/** The aggregation a question asks for, or null (the stat's kind decides). */
function aggOf(q: string): Agg | null {
  if (
    has(
      /\bhow many (points|readings|observations|samples|data points|measurements|writes)\b|\bnumber of (points|readings|observations|samples|measurements)\b/,
      q,
    )
  )
    return 'count'
  if (has(/\b(latest|current(ly)?|right now|most recent|last (value|reading|known)|now)\b/, q)) return 'last'
  if (has(/\b(average|avg|mean|typical)\b/, q)) return 'avg'
  if (has(/\b(min|minimum|lowest|smallest|least)\b/, q)) return 'min'
  if (has(/\b(max|maximum|highest|largest|biggest|top)\b/, q)) return 'max'
  if (has(/\b(total|sum|how many|how much|count|number of)\b/, q)) return 'sum'
  return null
}

/** A decline: op "unknown" with the reason (and candidates, flags) the engine answers it with. */
type Decline = (reason: string, extra?: Partial<ParsedIntent>) => ParsedIntent

/** Reads a question against the account's stats at `now`, its periods in time zone `zone`. */
export function parseIntent(question: string, stats: StatRef[], now: Date, zone = 'UTC'): ParsedIntent {
  const q = question
    .toLowerCase()
    .replace(/[’‘`]/g, "'")
    .replace(/[?!,;"()]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  const periods = findPeriods(q, now, zone)
  let rest = q
  for (const p of [...periods].reverse()) rest = `${rest.slice(0, p.start)} ${rest.slice(p.end)}`
  const none: Decline = (reason, extra = {}) => ({
    op: 'unknown',
    agg: null,
    stats: [],
    window: periods[0] ?? null,
    matched: [],
    reason,
    ...extra,
  })

  if (periods.some((p) => p.future))
    return none(
      periods.find((p) => p.future && p.why)?.why ??
        'the question is about a period that has not happened yet; answers come only from recorded data',
      { unsupported: true },
    )
  if (has(UNSUPPORTED, rest))
    return none(
      'forecasts, causes and explanations are outside what this engine answers; it reports totals, averages, minima, maxima, latest values, comparisons, rankings and peaks',
      { unsupported: true },
    )

  // Tags asked ("on host web1", "for host=web1", "by host") are read before the stat names, so their words name no stat.
  const tagAsk = readTags(rest, stats)
  rest = tagAsk.rest
  const { matches, leftover } = findNamedStats(rest, stats)
  const unread = unreadTime(rest, matches)
  if (unread) return none(`the period in the question ("${unread}") is not one this engine reads`, { unreadPeriod: true })
  const window = periods[0] ?? defaultPeriod(now)
  if (isRank(rest) && matches.length === 0) return rankIntent(rest, stats, periods, window, none)

  const chosen = chooseStats(q, rest, stats, matches, leftover, none)
  if ('op' in chosen) return chosen
  const { found, candidates, pctAsked } = chosen
  // "signups from germany": a stat is answered as a whole, so a breakdown asked for is declined, not ignored.
  const filter = found[0].how !== 'fuzzy' && leftover.length ? filterAsked(rest, leftover) : null
  if (filter)
    return none(`stats have no breakdown to filter by ("${filter}"); answers are for a stat as a whole`, {
      candidates: found.map((m) => m.stat.name),
      unsupported: true,
    })
  const narrowed = narrowByTags(
    found.map((m) => m.stat),
    tagAsk,
    none,
  )
  if (!Array.isArray(narrowed)) return narrowed
  const asked: Asked = {
    // Op words are read without the stat names, so that a stat called "uptime.drops" asks nothing.
    rest: found.reduce((r, m) => r.replace(m.phrase.toLowerCase(), ' '), rest),
    periods,
    window,
    now,
    none,
    base: {
      stats: narrowed,
      matched: found,
      candidates: found[0].how === 'fuzzy' ? candidates : undefined,
      ...(tagAsk.filter ? { filter: tagAsk.filter } : {}),
      ...(tagAsk.groupBy ? { groupBy: tagAsk.groupBy } : {}),
    },
  }
  if (tagAsk.groupBy) return groupIntent(asked, pctAsked, BREAKDOWN.exec(rest) ?? BREAKDOWN_OTHER.exec(rest))
  const breakdown = BREAKDOWN.exec(rest)
  const breakdownOther = BREAKDOWN_OTHER.exec(rest)
  if (pctAsked) return percentileIntent(asked, pctAsked, !!(breakdown || breakdownOther))
  if (breakdownOther && !breakdown) {
    return none(`a breakdown is by hour or by day ("${breakdownOther[0]}" is not one this engine gives)`, {
      candidates: asked.base.stats.map((s) => s.name),
      unsupported: true,
    })
  }
  if (breakdown) return breakdownIntent(asked, breakdown)
  return peakIntent(asked) ?? compareIntent(asked) ?? aggregateIntent(asked)
}

/**
 * A time word left over once the periods and the stats' names are read: a period this grammar does not know
 * (answering for the default window instead would answer another question). Null when there is none.
 */
function unreadTime(rest: string, matches: Match[]): string | null {
  let timeLeft = rest
  for (const m of matches) timeLeft = timeLeft.replace(m.phrase.toLowerCase(), ' ')
  timeLeft = timeLeft.replace(/\b(which|what|busiest|quietest|peak|the) (minute|hour|day|week|month)s?\b|\bwhat time\b/g, ' ')
  for (const re of [BREAKDOWN, BREAKDOWN_OTHER]) timeLeft = timeLeft.replace(new RegExp(re.source, 'g'), ' ')
  return UNREAD_TIME.exec(timeLeft)?.[0] ?? null
}

const isRank = (rest: string) =>
  has(
    /\bwhich (one|ones|stats?|metrics?|counters?|gauges?)\b|\b(top|biggest|largest) (\d+ )?(stats|metrics|movers|counters|gauges)\b|\b(stats|metrics|counters|gauges) (grew|rose|fell|dropped|changed|increased|decreased|were|was|had)\b|\brank\w*\b/,
    rest,
  )

/** A rank of the account's stats (of one kind where asked or implied), by a total, an average or the change. */
function rankIntent(
  rest: string,
  stats: StatRef[],
  periods: FoundPeriod[],
  window: ReturnType<typeof defaultPeriod> | FoundPeriod,
  none: Decline,
): ParsedIntent {
  const kindFilter = has(/\bgauges?\b/, rest) ? 'gauge' : has(/\bcounters?\b/, rest) ? 'counter' : null
  const byChange = has(CHANGE_UP, rest) || has(CHANGE_DOWN, rest) || has(CHANGE, rest)
  const order = byChange ? (has(CHANGE_DOWN, rest) || has(LOW, rest) ? 'asc' : 'desc') : has(LOW, rest) ? 'asc' : 'desc'
  const agg = byChange ? 'change' : aggOf(rest) === 'avg' || kindFilter === 'gauge' ? 'avg' : 'sum'
  const kind = kindFilter ?? (agg === 'avg' ? 'gauge' : agg === 'sum' ? 'counter' : null)
  const pool = stats.filter((s) => !kind || s.kind === kind)
  if (!pool.length) return none(`the account has no ${kind ?? ''} stats to rank`.replace('  ', ' '))
  const compareTo = byChange ? (periods[1] ?? window.previous()) : undefined
  return { op: 'rank', agg, order, stats: pool, pool, window, compareTo, matched: [] }
}

/**
 * The stats a question is about: those it names, else the one its leftover words match with confidence
 * (without a percentile word: "p95 latency" asks latency_ms's p95, "latncy p95" names api.latency.p95), with
 * the percentile word asked, if any. A decline where no stat matches, with the candidates and the question
 * asked again about each.
 */
function chooseStats(
  q: string,
  rest: string,
  stats: StatRef[],
  matches: Match[],
  leftover: string[],
  none: Decline,
): ParsedIntent | { found: Match[]; candidates?: string[]; pctAsked?: string } {
  if (matches.length) {
    let named = rest
    for (const m of matches) named = named.replace(m.phrase.toLowerCase(), ' ')
    return { found: matches, pctAsked: percentileIn(named) }
  }
  // The question asked again about each candidate, for the page's "Did you mean" links.
  const suggest = (words: string[], names: string[]) => {
    const set = new Set(words)
    return names
      .map((n) => stats.find((s) => s.name === n)!)
      .flatMap((s) => {
        const query = rephrase(q, set, s)
        return query ? [{ stat: s.name, query }] : []
      })
  }
  const phrase = leftover.join(' ')
  if (!phrase) return none('the question names no stat', { candidates: stats.slice(0, 5).map((s) => s.name) })
  const fuzzy = fuzzyMatch(phrase, stats)
  const pct = percentileIn(phrase)
  // "latncy p95" names the stat api.latency.p95; "p95 latency" of a stat latency_ms asks a percentile.
  if (pct && !(fuzzy.match && tokens(fuzzy.match.stat.name).includes(pct))) {
    const without = leftover.filter((w) => !pct.split(' ').includes(w))
    const bare = without.length ? fuzzyMatch(without.join(' '), stats) : { match: null, candidates: [] }
    if (bare.match) return { found: [bare.match], candidates: bare.candidates, pctAsked: pct }
    if (bare.candidates.length) {
      return none(`no stat matches "${without.join(' ')}" with confidence`, {
        candidates: bare.candidates,
        suggestions: suggest(leftover, bare.candidates),
      })
    }
  }
  if (fuzzy.match) return { found: [fuzzy.match], candidates: fuzzy.candidates }
  if (fuzzy.candidates.length)
    return none(`no stat matches "${phrase}" with confidence`, {
      candidates: fuzzy.candidates,
      suggestions: suggest(leftover, fuzzy.candidates),
    })
  const wantsKind = /\b(how many|total|sum|count|number of)\b/.test(rest)
    ? 'counter'
    : /\b(average|avg|mean|typical)\b/.test(rest)
      ? 'gauge'
      : null
  const near = closestByName(phrase, stats, wantsKind)
  return none(`no stat is named like "${phrase}"`, {
    candidates: near.names,
    suggestions: suggest(leftover, near.names),
    unlike: !near.similar,
  })
}

const percentileIn = (text: string) => PERCENTILE.exec(text)?.[0]

/** A filter the question asks of a named stat ("from germany" of the words left over), which stats do not have. */
function filterAsked(rest: string, leftover: string[]): string | null {
  const words = leftover.filter((w) => /^[a-z]+$/.test(w)).join('|')
  const filter =
    words &&
    new RegExp(`\\b(?:from|by|via|where|for|in|on|with|without|excluding|except|only|among) (?:the |a |an |our |my )?(?:${words})\\b`).exec(
      rest,
    )
  return filter ? filter[0] : null
}

/** A question about named stats, read without their names. */
interface Asked {
  rest: string
  periods: FoundPeriod[]
  window: FoundPeriod | ReturnType<typeof defaultPeriod>
  now: Date
  none: Decline
  base: {
    stats: StatRef[]
    matched: Match[]
    candidates: string[] | undefined
    filter?: Record<string, string>
    groupBy?: string
  }
}

// ------------------------------------------------------------------ tags (docs/decisions.md §24)

interface TagAsk {
  /** The question without the tag phrases read. */
  rest: string
  filter?: Record<string, string>
  groupBy?: string
  /** A tag key the account has, asked with a value none of its series holds. */
  unknown?: { key: string; value: string }
}

const escapeRe = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const alternation = (xs: Iterable<string>) =>
  [...xs]
    .sort((a, b) => b.length - a.length)
    .map(escapeRe)
    .join('|')

/**
 * The tags a question asks of its stats, from the account's tag keys and values: a filter ("on host web1", "for
 * host=web1", "where region is eu", "host:web1", "on web1" where only one key has that value) and a group-by ("by
 * host", "per region", "for each host"). A key asked with a value no series holds is kept as `unknown`, to decline.
 */
export function readTags(rest: string, stats: StatRef[]): TagAsk {
  const keys = new Map<string, Map<string, string>>()
  for (const s of stats)
    for (const t of s.tagged ?? [])
      for (const [k, v] of Object.entries(t.tags)) {
        let values = keys.get(k)
        if (!values) keys.set(k, (values = new Map()))
        values.set(v.toLowerCase(), v)
      }
  if (!keys.size) return { rest }
  const out: TagAsk = { rest }
  const cut = (m: RegExpExecArray) => {
    out.rest = `${out.rest.slice(0, m.index)} ${out.rest.slice(m.index + m[0].length)}`
  }
  const keyRe = alternation(keys.keys())
  const allValues = new Set([...keys.values()].flatMap((v) => [...v.keys()]))
  const valueRe = alternation(allValues)
  const keep = (k: string, lower: string): boolean => {
    const v = keys.get(k)?.get(lower)
    if (v === undefined) return false
    out.filter = { ...out.filter, [k]: v }
    return true
  }
  const PRE = '(?:on|for|from|in|at|where|with|only|of)'
  const pair = new RegExp(`(?:\\b${PRE}\\s+(?:the\\s+)?)?\\b(${keyRe})(?:\\s*[=:]\\s*|\\s+(?:is\\s+|=\\s*)?)(${valueRe})(?![\\w.:/-])`)
  for (let m = pair.exec(out.rest); m; m = pair.exec(out.rest)) {
    if (!keep(m[1], m[2])) break
    cut(m)
  }
  // A value alone, where exactly one key holds it: "orders on web1".
  const alone = new RegExp(`\\b(?:on|from|for)\\s+(?:the\\s+)?(${valueRe})(?![\\w.:/-])`)
  for (let m = alone.exec(out.rest); m; m = alone.exec(out.rest)) {
    const holders = [...keys].filter(([, vs]) => vs.has(m![1]))
    // Not a short or common word ("for us" is not region us): those need their key ("for region us").
    if (holders.length !== 1 || m[1].length < 3 || isGrammarWord(m[1]) || !keep(holders[0][0], m[1])) break
    cut(m)
  }
  const unknown = new RegExp(`\\b${PRE}\\s+(?:the\\s+)?(${keyRe})(?:\\s*[=:]\\s*|\\s+(?:is\\s+|=\\s*)?)([^\\s]+)`).exec(out.rest)
  // Not a word of the grammar, nor of a stat's name ("the average of host load" asks the stat host.load).
  const nameWords = new Set(stats.flatMap((s) => tokens(s.name)))
  if (unknown && !isGrammarWord(unknown[2]) && !nameWords.has(unknown[2])) {
    out.unknown = { key: unknown[1], value: unknown[2] }
    cut(unknown)
  }
  const group = new RegExp(
    `\\b(?:by|per|for each|for every|each|every|across|split by|broken down by|grouped by|group by)\\s+(?:the\\s+)?(${keyRe})(?:e?s)?\\b`,
  ).exec(out.rest)
  if (group) {
    out.groupBy = group[1]
    cut(group)
  }
  return out
}

const pairsOf = (tags: Record<string, string>) =>
  Object.keys(tags)
    .sort()
    .map((k) => `${k}=${tags[k]}`)

/** A stat's tags as `key=value`, the ones of `key` only when given (at most 20: an answer names them). */
function tagList(stat: StatRef, key?: string): string[] {
  const seen = new Set<string>()
  for (const t of stat.tagged ?? []) for (const [k, v] of Object.entries(t.tags)) if (!key || k === key) seen.add(`${k}=${v}`)
  return [...seen].sort().slice(0, 20)
}

/**
 * The stats a question names, narrowed to the series its filter keeps (named `requests{host=web1}`, read as one);
 * a decline when a stat has no such series or lacks the tag a group-by asks for, naming the tags it has.
 */
function narrowByTags(stats: StatRef[], ask: TagAsk, none: Decline): StatRef[] | ParsedIntent {
  if (!ask.filter && !ask.groupBy && !ask.unknown) return stats
  if (ask.groupBy && stats.length > 1)
    return none('a figure per tag value is given for one stat at a time', { candidates: stats.map((s) => s.name), unsupported: true })
  const out: StatRef[] = []
  for (const stat of stats) {
    const tagged = stat.tagged ?? []
    const tagStat = stat.name
    if (!tagged.length)
      return none('the stat asked about has no tags: it is answered as a whole', { tagStat, unsupported: true, tagValues: [] })
    if (ask.unknown)
      return none('no series of the stat asked about has that tag value', {
        tagStat,
        unsupported: true,
        tagValues: tagList(stat, ask.unknown.key),
      })
    if (ask.groupBy && !tagged.some((t) => ask.groupBy! in t.tags))
      return none('the stat asked about has no such tag to break it down by', { tagStat, unsupported: true, tagValues: tagList(stat) })
    if (!ask.filter) {
      out.push(stat)
      continue
    }
    const keep = tagged.filter((t) => Object.entries(ask.filter!).every(([k, v]) => t.tags[k] === v))
    if (!keep.length)
      return none('no series of the stat asked about carries the tags asked for', { tagStat, unsupported: true, tagValues: tagList(stat) })
    out.push({
      ...stat,
      base: stat.name,
      name: `${stat.name}{${pairsOf(ask.filter).join(',')}}`,
      series: keep.map((t) => t.id),
      tagged: keep,
    })
  }
  return out
}

/**
 * "requests yesterday by host": one figure per value of the tag over one period (totals, averages, minima or maxima);
 * anything else by a tag is declined with what to ask instead.
 */
function groupIntent(
  { rest, periods, window, none, base }: Asked,
  pctAsked: string | undefined,
  breakdown: RegExpExecArray | null,
): ParsedIntent {
  const candidates = base.stats.map((s) => s.base ?? s.name)
  if (base.stats.length > 1) return none('a figure per tag value is given for one stat at a time', { candidates, unsupported: true })
  const asksOther =
    pctAsked ||
    breakdown ||
    periods.length > 1 ||
    has(COMPARE, rest) ||
    has(CHANGE_UP, rest) ||
    has(CHANGE_DOWN, rest) ||
    has(CHANGE, rest) ||
    has(/\bwhen\b|\bwhat time\b|\bwhich (hour|day|minute)\b|\bbusiest\b|\bquietest\b|\bpeak\w*\b|\bspik\w*\b/, rest)
  const agg = aggOf(rest)
  if (asksOther || agg === 'last' || agg === 'count')
    return none(
      'a figure per tag value is given for a total, an average, a minimum or a maximum over one period; for anything else ask about one value at a time ("on", the tag and its value)',
      { candidates, unsupported: true },
    )
  return { op: 'aggregate', agg, window, ...base }
}

const COMPARE = /\b(compare[ds]?|comparing|comparison|vs\.?|versus|against|compared)\b/

/** Percentiles of gauges over one period. */
function percentileIntent({ rest, periods, window, none, base }: Asked, pctAsked: string, breakdown: boolean): ParsedIntent {
  const counters = base.stats.filter((s) => s.kind === 'counter')
  if (counters.length) {
    return none("only gauges have percentiles (a counter's values are counts, added up)", {
      candidates: counters.map((s) => s.name),
      unsupported: true,
      percentile: true,
    })
  }
  if (
    breakdown ||
    periods.length > 1 ||
    has(COMPARE, rest) ||
    has(CHANGE_UP, rest) ||
    has(CHANGE_DOWN, rest) ||
    has(CHANGE, rest) ||
    has(/\bwhen\b|\bwhat time\b|\bwhich (hour|day|minute)\b|\bbusiest\b|\bpeak\w*\b/, rest)
  ) {
    return none(
      'percentiles are answered over one period at a time, not by hour or day, between two periods or as a peak: ask for each period on its own',
      { candidates: base.stats.map((s) => s.name), unsupported: true },
    )
  }
  return { op: 'aggregate', agg: 'percentile', percentiles: percentilesOf(pctAsked), window, ...base }
}

/** One stat in hourly or daily buckets: the last day or week unless a period is named, at most MAX_BREAKDOWN of them. */
function breakdownIntent({ rest, periods, now, none, base }: Asked, breakdown: RegExpExecArray): ParsedIntent {
  const named = base.stats
  if (named.length > 1) return none('a breakdown is of one stat at a time', { candidates: named.map((s) => s.name) })
  const bucket = (breakdown.slice(1).find(Boolean)!.startsWith('h') ? 3600 : 86400) as 3600 | 86400
  const days = bucket === 3600 ? 1 : 7
  const end = Math.floor(now.getTime() / 60_000) * 60_000
  const w = periods[0] ?? { from: new Date(end - days * 86_400_000), to: now, label: `in the last ${days === 1 ? '24 hours' : '7 days'}` }
  const count = Math.ceil(w.to.getTime() / 1000 / bucket) - Math.floor(w.from.getTime() / 1000 / bucket)
  if (count > MAX_BREAKDOWN[bucket]) {
    // No digits in the reason: the answer repeats it, and every number in an answer must be grounded in data.
    return none(
      `a breakdown by ${bucket === 3600 ? 'hour covers at most a week; ask by day' : 'day covers at most a quarter; ask for a shorter period'}${bucket === 3600 ? ' for a longer period' : ''}`,
      { candidates: named.map((s) => s.name), unsupported: true },
    )
  }
  let agg = aggOf(rest)
  agg = named[0].kind === 'counter' ? 'sum' : agg === 'min' || agg === 'max' ? agg : 'avg'
  return { op: 'breakdown', agg, window: w, bucket, ...base }
}

/** When one stat was highest or lowest; null when the question does not ask when. */
function peakIntent({ rest, window, none, base }: Asked): ParsedIntent | null {
  if (!has(/\bwhen\b|\bwhat time\b|\bwhich (hour|day|minute)\b|\bbusiest\b|\bquietest\b|\bpeak\w*\b|\bspik\w*\b/, rest)) return null
  if (base.stats.length > 1) return none('a peak is found for one stat at a time', { candidates: base.stats.map((s) => s.name) })
  return {
    op: 'peak',
    agg: base.stats[0].kind === 'counter' ? 'sum' : has(LOW, rest) ? 'min' : 'max',
    order: has(LOW, rest) ? 'asc' : 'desc',
    window,
    ...base,
  }
}

/** One stat across two periods; null when the question neither compares nor asks a change. */
function compareIntent({ rest, periods, window, none, base }: Asked): ParsedIntent | null {
  const explicitCompare = has(COMPARE, rest) || periods.length >= 2
  const changeWords = has(CHANGE_UP, rest) || has(CHANGE_DOWN, rest) || has(CHANGE, rest)
  if (!explicitCompare && !changeWords) return null
  if (base.stats.length > 1) return none('a comparison is of one stat across two periods', { candidates: base.stats.map((s) => s.name) })
  let agg = aggOf(rest)
  if (agg === 'last' || agg === 'count') agg = null
  // "the last 6 hours vs the previous 6 hours": a second phrase that reads as the same span means the one before it.
  const second = periods[1] && !sameSpan(periods[1], window) ? periods[1] : undefined
  // A period still running against the whole one before ("this week with last week", "today vs
  // yesterday") compares the same elapsed stretch of both and gives the whole earlier one as context,
  // as a rank by growth does: two days against seven would read as a fall while daily orders doubled.
  const running = 'sofar' in window ? window.sofar : undefined
  if (running && (!second || sameSpan(second, running.whole))) {
    return { op: 'compare', agg, window, compareTo: window.previous(), context: running.whole, stretch: running.stretch, ...base }
  }
  if (second?.sofar && sameSpan(window, second.sofar.whole)) {
    // asked the other way round: "last month with this month"
    return {
      op: 'compare',
      agg,
      window: second.previous(),
      compareTo: second,
      context: second.sofar.whole,
      stretch: second.sofar.stretch,
      ...base,
    }
  }
  return { op: 'compare', agg, window, compareTo: second ?? window.previous(), ...base }
}

/** A total, average, minimum, maximum or latest value over the window. */
function aggregateIntent({ rest, periods, window, base }: Asked): ParsedIntent {
  const named = base.stats
  let agg = aggOf(rest)
  // A counter's "latest" is one increment, which nobody means: its total is what is asked.
  if (agg === 'last' && named.every((s) => s.kind === 'counter')) agg = null
  // A counter's highest or lowest "value" is its busiest or quietest hour, not one increment.
  if ((agg === 'max' || agg === 'min') && named.length === 1 && named[0].kind === 'counter') {
    return { op: 'peak', agg: 'sum', order: agg === 'min' ? 'asc' : 'desc', window, ...base }
  }
  if (agg === 'last' && !periods.length) return { op: 'aggregate', agg, window: null, ...base }
  return { op: 'aggregate', agg, window, ...base }
}
