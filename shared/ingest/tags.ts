// Tags (docs/decisions.md §24): a point's tag set names one series of its stat. At most 10 tags; a key is
// `[a-z][a-z0-9_.-]{0,63}`, a value 1 to 200 printable characters. A tag set is kept as a plain object and
// keyed by its canonical text (keys sorted), so the same set sent in any order is one series.
import { reject, accept, type Parsed } from './parsed.js'
import { unprintableText } from './text.js'

export type Tags = Readonly<Record<string, string>>

export const MAX_TAGS = 10
export const MAX_TAG_VALUE_LENGTH = 200
const KEY = /^[a-z][a-z0-9_.-]{0,63}$/
// A value of 1 to 200 printable ASCII characters passes every rule below (no control, invisible or replacement
// character, no surrogate, one code point per unit): most values are, and are decided by this one test.
const PLAIN_VALUE = /^[\x20-\x7e]{1,200}$/

/** One tag checked against §24's rules; undefined when it is fine, else why not (naming the tag). */
function badTag(key: string, value: unknown): string | undefined {
  if (!KEY.test(key)) return `invalid tag key "${key.slice(0, 70)}": a key starts with a-z and holds at most 64 of a-z, 0-9, _, . and -`
  if (typeof value !== 'string') return `invalid tag "${key}": the value must be a string`
  if (PLAIN_VALUE.test(value)) return undefined
  const length = [...value].length
  if (length < 1 || length > MAX_TAG_VALUE_LENGTH)
    return `invalid tag "${key}": the value must be 1 to ${MAX_TAG_VALUE_LENGTH} characters (got ${length})`
  const why = unprintableText(value)
  if (why) return `invalid tag "${key}": the value ${why}`
  return undefined
}

/** A tag set as it arrives in a v1 write (`"tags": {"host": "web1"}`); absent, null or {} is the untagged series. */
export function parseTags(raw: unknown): Parsed<Tags | undefined> {
  if (raw === undefined || raw === null) return accept(undefined)
  if (typeof raw !== 'object' || Array.isArray(raw)) return reject('invalid_tags', 'invalid tags: must be an object of key: "value"')
  const entries = Object.entries(raw as Record<string, unknown>)
  if (!entries.length) return accept(undefined)
  if (entries.length > MAX_TAGS) return reject('invalid_tags', `invalid tags: at most ${MAX_TAGS} tags per point (got ${entries.length})`)
  for (const [k, v] of entries) {
    const why = badTag(k, v)
    if (why) return reject('invalid_tags', why)
  }
  return accept(sortTags(entries as Array<[string, string]>))
}

/** A point's tag set with the key of its series (seriesKey): what pointTags answers. */
export interface PointTags {
  tags: Tags
  series: string
}

/**
 * Tag sets this process has read, with their stat, as a trie: stat name, then each tag's key and value in the
 * order sent, then END holding the answer. A lookup walks the raw object with one Map lookup per name, key and
 * value, building no string (a key text of the whole set, built and hashed for every point, cost six times as
 * much). Only sets that parsed are stored, so a walk that ends anywhere but on an answer falls back to parseTags.
 */
interface Known {
  readonly next: Map<string, Known>
  answer?: Parsed<PointTags | undefined>
}
let knownSets: Map<string, Known> = new Map()
let knownCount = 0
const MAX_KNOWN_SETS = 10_000

function knownAnswer(name: string, raw: object): Parsed<PointTags | undefined> | undefined {
  let node = knownSets.get(name)
  for (const k in raw) {
    if (!node || !Object.hasOwn(raw, k)) return undefined
    const v = (raw as Record<string, unknown>)[k]
    if (typeof v !== 'string') return undefined
    node = node.next.get(k)?.next.get(v)
  }
  return node?.answer
}

function remember(name: string, tags: Tags, answer: Parsed<PointTags | undefined>, raw: object): void {
  if (++knownCount > MAX_KNOWN_SETS) {
    knownSets = new Map()
    knownCount = 1
  }
  const child = (parent: Map<string, Known>, key: string): Known => {
    let found = parent.get(key)
    if (!found) parent.set(key, (found = { next: new Map() }))
    return found
  }
  let node = child(knownSets, name)
  // The raw object's own order (as sent), which is the order a lookup walks; its values are the parsed tags'.
  for (const k in raw) if (Object.hasOwn(raw, k)) node = child(child(node.next, k).next, tags[k])
  node.answer = answer
}

/**
 * parseTags and the series key of stat `name` with them, as one answer kept for the next point naming the same
 * stat and tags (a batch's points, a writer's next request): checking, sorting and keying a tag set again for
 * every point was most of what a tag cost. Points of one series then share one key string.
 */
export function pointTags(name: string, raw: unknown): Parsed<PointTags | undefined> {
  const plain = raw !== null && typeof raw === 'object' && !Array.isArray(raw)
  const known = plain ? knownAnswer(name, raw) : undefined
  if (known) return known
  const parsed = parseTags(raw)
  if (!parsed.ok) return parsed
  const answer = accept(parsed.value ? { tags: parsed.value, series: seriesKey(name, parsed.value) } : undefined)
  if (plain && parsed.value) remember(name, parsed.value, answer, raw)
  return answer
}

/**
 * A protocol's tags or labels (line protocol, DogStatsD, remote write) as a tag set: keys are lower-cased and
 * every character outside the key set becomes `_` (as docs/decisions.md §21 did for names); a bare DogStatsD
 * tag (`#canary`) becomes `canary: "true"`. What still breaks a rule is refused for that metric, naming the tag.
 */
export function protocolTags(pairs: ReadonlyArray<readonly [string, string]>): Parsed<Tags | undefined> {
  if (!pairs.length) return accept(undefined)
  const out: Array<[string, string]> = []
  for (const [k, v] of pairs) {
    const key = k.toLowerCase().replace(/[^a-z0-9_.-]/g, '_')
    out.push([key, v === '' ? 'true' : v])
  }
  const tags = sortTags(out)
  const n = Object.keys(tags).length
  if (n > MAX_TAGS) return reject('invalid_tags', `invalid tags: at most ${MAX_TAGS} tags per series (got ${n})`)
  for (const [k, v] of Object.entries(tags)) {
    const why = badTag(k, v)
    if (why) return reject('invalid_tags', why)
  }
  return accept(tags)
}

/** Whether the keys (or entries' keys) are in ascending order already, as most senders keep them: no sort needed. */
function ascending(keys: ReadonlyArray<string | readonly [string, unknown]>): boolean {
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1]
    const b = keys[i]
    if ((typeof a === 'string' ? a : a[0]) >= (typeof b === 'string' ? b : b[0])) return false
  }
  return true
}

function sortTags(entries: Array<[string, string]>): Tags {
  const sorted = ascending(entries) ? entries : [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const out: Record<string, string> = {}
  for (const [k, v] of sorted) out[k] = v
  return out
}

/** The canonical text of a tag set (keys sorted): equal sets, equal text. JSON of `[[key, value], ...]`, written out directly. */
export function tagsText(tags: Tags): string {
  const keys = Object.keys(tags)
  if (!ascending(keys)) keys.sort()
  let text = '['
  for (let i = 0; i < keys.length; i++) text += `${i ? ',' : ''}[${JSON.stringify(keys[i])},${JSON.stringify(tags[keys[i]])}]`
  return `${text}]`
}

/** The key of a series among a request's points and in the stat directory: the stat name alone when untagged. */
export function seriesKey(name: string, tags: Tags | undefined | null): string {
  return tags ? `${name}\u0000${tagsText(tags)}` : name
}

/** `host:web1,region:eu` (a read's `filter=`) as a tag set; a value may hold `:`, not `,`. */
export function parseFilter(raw: string | undefined): Parsed<Tags | undefined> {
  if (!raw) return accept(undefined)
  const pairs: Array<[string, string]> = []
  for (const part of raw.split(',')) {
    const at = part.indexOf(':')
    if (at < 1) return reject('invalid_filter', `invalid filter "${part}": write key:value, comma separated (host:web1,region:eu)`)
    pairs.push([part.slice(0, at), part.slice(at + 1)])
  }
  for (const [k, v] of pairs) {
    const why = badTag(k, v)
    if (why) return reject('invalid_filter', `invalid filter: ${why}`)
  }
  return accept(sortTags(pairs))
}

/** A tag set as an export's CSV cell (`k=v;k=v`, keys sorted); '' when untagged. */
export function tagsCell(tags: Tags | null | undefined): string {
  if (!tags) return ''
  return Object.keys(tags)
    .sort()
    .map((k) => `${k}=${tags[k]}`)
    .join(';')
}

/** An import's CSV `tags` cell back into a tag set (the inverse of tagsCell). */
export function parseTagsCell(cell: string): Parsed<Tags | undefined> {
  if (!cell.trim()) return accept(undefined)
  const obj: Record<string, string> = {}
  for (const part of cell.split(';')) {
    const at = part.indexOf('=')
    if (at < 1) return reject('invalid_tags', `invalid tags "${cell.slice(0, 80)}": write k=v;k=v`)
    obj[part.slice(0, at).trim()] = part.slice(at + 1)
  }
  return parseTags(obj)
}
