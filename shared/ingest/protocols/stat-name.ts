// Series for the protocols people already run (docs/decisions.md §24, which ends §21's name suffixes): the stat
// name is the metric's name alone, characters outside docs/decisions.md §I-2.1's set becoming `_`, and its tags
// or labels are the series' tags (tags.ts's protocolTags). The name then passes the same rule as every write.
import { parseStatName } from '../names.js'
import { reject, type Parsed } from '../parsed.js'
import { protocolTags, seriesKey, type Tags } from '../tags.js'

// docs/decisions.md §I-2.1's set, as names.ts holds it: letters, marks, numbers, space, dot, underscore, hyphen.
const OUTSIDE = /[^\p{L}\p{M}\p{N} ._-]/gu

/** One name part with every character a stat name cannot hold replaced by `_`. */
export function cleanPart(part: string): string {
  return part.replace(OUTSIDE, '_')
}

/** A protocol series: the stat name and, when tagged, its tags and seriesKey (the fields a ValidPoint takes). */
export interface ProtocolSeries {
  name: string
  tags?: Tags
  series?: string
}

/**
 * Series this process has read, as a trie: the metric, then each pair's key and value in the order sent, the
 * answer on the node where its pairs end. A look-up is one Map look-up a part and builds no string (a text of
 * the metric and every pair, built and hashed for every point, cost an OTLP point a fifth of its conversion).
 */
interface Known {
  readonly next: Map<string, Known>
  answer?: Parsed<ProtocolSeries>
}
let seen = new Map<string, Known>()
let seenCount = 0
const MAX_SEEN = 10_000

function child(parent: Map<string, Known>, key: string): Known {
  let found = parent.get(key)
  if (!found) parent.set(key, (found = { next: new Map() }))
  return found
}

/**
 * The series of a metric and its tags: the same tag set in any order is one series. A tag that breaks
 * docs/decisions.md §24's rules once cleaned (a value over 200 characters, more than 10 tags) refuses the metric.
 * A pure function of its input, so each answer is kept for the next request naming the same series (the cleaning,
 * sorting and checking were most of what a protocol point cost); callers copy what they take from it.
 */
export function protocolSeries(metric: string, pairs: ReadonlyArray<readonly [string, string]>): Parsed<ProtocolSeries> {
  let node = seen.get(metric)
  for (let i = 0; node && i < pairs.length; i++) node = node.next.get(pairs[i][0])?.next.get(pairs[i][1])
  if (node?.answer) return node.answer
  const series = readSeries(metric, pairs)
  if (++seenCount > MAX_SEEN) {
    seen = new Map()
    seenCount = 1
  }
  node = child(seen, metric)
  for (const [k, v] of pairs) node = child(child(node.next, k).next, v)
  node.answer = series
  return series
}

function readSeries(metric: string, pairs: ReadonlyArray<readonly [string, string]>): Parsed<ProtocolSeries> {
  const name = parseStatName(cleanPart(metric))
  if (!name.ok) return name
  const tags = protocolTags(pairs)
  if (!tags.ok) return reject(tags.code, tags.message)
  return {
    ok: true,
    value: tags.value ? { name: name.value, tags: tags.value, series: seriesKey(name.value, tags.value) } : { name: name.value },
  }
}
