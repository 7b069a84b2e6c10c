// Stat names for the protocols people already run (docs/decisions.md §21): the metric's name, then each tag or
// label sorted by key as `.<key>_<value>`; characters outside docs/decisions.md §I-2.1's set become `_`; a result over
// 128 characters is refused for that metric. The result then passes the same name rule as every write.
import { MAX_STAT_NAME_LENGTH, parseStatName } from '../names.js'
import { reject, type Parsed } from '../parsed.js'

// docs/decisions.md §I-2.1's set, as names.ts holds it: letters, marks, numbers, space, dot, underscore, hyphen.
const OUTSIDE = /[^\p{L}\p{M}\p{N} ._-]/gu

/** One name part with every character a stat name cannot hold replaced by `_`. */
export function cleanPart(part: string): string {
  return part.replace(OUTSIDE, '_')
}

/**
 * The stat name of a metric and its tags. A tag without a value (DogStatsD's bare `#canary`) adds `.<key>`.
 * Tags are sorted by key (then value), so the same series always lands on the same stat whatever order the
 * sender wrote them in.
 */
export function protocolStatName(metric: string, tags: ReadonlyArray<readonly [string, string]>): Parsed<string> {
  let name = cleanPart(metric)
  if (tags.length) {
    const sorted =
      tags.length === 1 ? tags : [...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    for (const [k, v] of sorted) name += v === '' ? `.${cleanPart(k)}` : `.${cleanPart(k)}_${cleanPart(v)}`
  }
  // Counted in code points, as names.ts counts them.
  if (name.length > MAX_STAT_NAME_LENGTH && [...name].length > MAX_STAT_NAME_LENGTH) {
    return reject(
      'stat_name_too_long',
      `invalid stat name: "${name.slice(0, 40)}..." is longer than ${MAX_STAT_NAME_LENGTH} characters once its tags are appended`,
    )
  }
  return parseStatName(name)
}
