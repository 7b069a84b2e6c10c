// Finding the account's stats in a question: exact name, then normalised
// (case, separators, a plural "s", "sign ups" = "signups"), then fuzzy with
// fuse.js, accepted only when the best candidate is close and clearly ahead of
// the second; otherwise the caller declines and names the candidates.
import Fuse from 'fuse.js'
import type { Kind } from '../stats/repo.js'

export interface StatRef {
  id: string
  name: string
  kind: Kind
  /**
   * A stat with tagged series (docs/decisions.md §24): the ids read as the one answer (all of its series, or those a
   * question's filter keeps), and every tagged series with its tags, for a filter or a group-by.
   */
  series?: string[]
  tagged?: Array<{ id: string; tags: Record<string, string> }>
  /** A stat narrowed by a filter or to one group: the stat's own name (`name` then says which series, `requests{host=web1}`). */
  base?: string
}

export interface Match {
  stat: StatRef
  phrase: string
  how: 'exact' | 'normalised' | 'fuzzy'
  /** 0 for exact and normalised matches; fuse.js's score (0 identical .. 1) for fuzzy ones. */
  score: number
}

/** A fuzzy match is accepted at or below this score... */
export const FUZZY_ACCEPT = 0.3
/** ...and only when the second candidate scores at least this much worse. */
export const FUZZY_MARGIN = 0.1

// Words of the question's grammar: never part of a stat phrase left over for fuzzy matching.
const GRAMMAR = new Set(
  `a about across all am an and any are as at average avg be been between biggest busiest by can change changed changes
compare compared comparing comparison could count counts current currently data day days decline declined decrease decreased did do does down
drop dropped during each ever every fall fell few fewest for from get gets give got grew grow growth had has have high higher highest hour hours how
i in increase increased is it its just largest last latest least level low lower lowest many max maximum me mean median min minimum minute minutes
month months most much my now number numbers of on or our over past peak peaked peaks per period please point points previous reading readings
recent right rise rose see shift show shrank since smallest so spike spiked stat stats metric metrics sum tell than that the their there these this
those time times to today top total totals up us value values versus vs was we week weeks were what whats when where which did while with
year years yesterday you your hi hey ok okay quarter quietest observations samples went go going hourly daily per each every breakdown`.split(
    /\s+/,
  ),
)

/** Whether a word is one of the question grammar's own (never a stat's name, nor a tag value read on its own). */
export const isGrammarWord = (w: string) => GRAMMAR.has(w)

/** Lower-case tokens of a name or question (separators: space, dot, underscore, hyphen, slash). */
export function tokens(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9%]+/)
    .filter(Boolean)
}

/** The comparison form of a token: a trailing plural "s" dropped. */
const stem = (t: string) => (t.length > 3 && t.endsWith('s') && !t.endsWith('ss') ? t.slice(0, -1) : t)
/** A name or phrase without separators, a plural "s" dropped at the end ("sign ups" = "signups" = "signup"). */
const squash = (ts: string[]) => stem(ts.join(''))

/**
 * Stats named in the text: a run of question tokens whose squashed form equals the stat's
 * (so "api latency", "API-Latency" and "api.latency" all name api.latency). Longer names win
 * where two overlap ("api latency" is api.latency, not latency).
 */
export function findNamedStats(text: string, stats: StatRef[]): { matches: Match[]; leftover: string[] } {
  const q = tokens(text)
  const lower = text.toLowerCase()
  const found: Array<{ stat: StatRef; i: number; len: number; phrase: string }> = []
  for (const stat of stats) {
    const st = tokens(stat.name)
    const target = squash(st)
    if (!target) continue
    for (let i = 0; i < q.length; i++) {
      let acc = ''
      for (let len = 1; len <= Math.min(8, q.length - i); len++) {
        acc += q[i + len - 1]
        if (acc.length > target.length + 1) break
        if (stem(acc) === target) found.push({ stat, i, len, phrase: q.slice(i, i + len).join(' ') })
      }
    }
  }
  found.sort((a, b) => squash(tokens(b.stat.name)).length - squash(tokens(a.stat.name)).length || a.i - b.i)
  const used = new Set<number>()
  const matches: Match[] = []
  for (const f of found) {
    const idx = Array.from({ length: f.len }, (_, k) => f.i + k)
    if (idx.some((k) => used.has(k)) || matches.some((m) => m.stat.id === f.stat.id)) continue
    idx.forEach((k) => {
      used.add(k)
    })
    const verbatim = new RegExp(`(^|[^a-z0-9])${escapeRe(f.stat.name.toLowerCase())}($|[^a-z0-9])`).test(lower)
    matches.push({ stat: f.stat, phrase: verbatim ? f.stat.name : f.phrase, how: verbatim ? 'exact' : 'normalised', score: 0 })
  }
  matches.sort((a, b) => lower.indexOf(a.phrase.toLowerCase()) - lower.indexOf(b.phrase.toLowerCase()))
  const leftover = q.filter((t, k) => !used.has(k) && !GRAMMAR.has(t) && !/^\d+$/.test(t))
  return { matches, leftover }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Fuzzy match of a leftover phrase: the best candidate when it is close (score <= FUZZY_ACCEPT)
 * and clearly ahead (the second at least FUZZY_MARGIN worse); otherwise the candidates, best first.
 */
export function fuzzyMatch(phrase: string, stats: StatRef[]): { match: Match | null; candidates: string[] } {
  if (!phrase || !stats.length) return { match: null, candidates: [] }
  const fuse = new Fuse(
    stats.map((s) => ({ s, name: s.name, words: tokens(s.name).join(' ') })),
    {
      keys: ['name', 'words'],
      includeScore: true,
      ignoreLocation: true,
      threshold: 0.5,
    },
  )
  const results = fuse.search(phrase).filter((r) => r.score !== undefined)
  const best = results[0]
  const second = results[1]
  const candidates = results.slice(0, 3).map((r) => r.item.name)
  if (best && best.score! <= FUZZY_ACCEPT && (!second || second.score! - best.score! >= FUZZY_MARGIN)) {
    return { match: { stat: best.item.s, phrase, how: 'fuzzy', score: Math.round(best.score! * 1000) / 1000 }, candidates }
  }
  return { match: null, candidates }
}

/** Character bigrams of a text's tokens (" signups " -> " s", "si", ...), for a similarity that needs no shared word. */
function bigrams(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const t of tokens(text)) {
    const w = ` ${stem(t)} `
    for (let i = 0; i < w.length - 1; i++) out.set(w.slice(i, i + 2), (out.get(w.slice(i, i + 2)) ?? 0) + 1)
  }
  return out
}

/** Dice coefficient of two bigram bags: 0 (nothing shared) .. 1 (the same). */
function dice(a: Map<string, number>, b: Map<string, number>): number {
  let shared = 0,
    total = 0
  for (const [g, n] of a) {
    shared += Math.min(n, b.get(g) ?? 0)
    total += n
  }
  for (const n of b.values()) total += n
  return total ? (2 * shared) / total : 0
}

/**
 * The stats closest by name to a phrase that fuzzy matching found nothing near (decision 13: a
 * decline still names the closest candidates): by shared character pairs, the kind the question
 * implies first ("how many" asks of counters), then by name. `similar` is false when no stat shares
 * anything with the phrase: then they are only the account's stats of that kind, and the answer says so.
 */
export function closestByName(
  phrase: string,
  stats: StatRef[],
  kind: StatRef['kind'] | null,
  n = 3,
): { names: string[]; similar: boolean } {
  const p = bigrams(phrase)
  const scored = stats
    .map((s) => ({ s, score: dice(p, bigrams(s.name)) }))
    .sort((a, b) => Number(b.s.kind === kind) - Number(a.s.kind === kind) || b.score - a.score || a.s.name.localeCompare(b.s.name))
  const top = scored.slice(0, n)
  return { names: top.map((x) => x.s.name), similar: top.some((x) => x.score >= 0.2) }
}

/**
 * The question asked again about `stat`: the words of the phrase that named no stat (`words`, by
 * their tokens) give way to the stat's name, the rest of the question kept. "How many" and totals are
 * asked only of counters: of a gauge the question asks its average. Null when no word is replaced.
 */
export function rephrase(question: string, words: Set<string>, stat: StatRef): string | null {
  const parts = question.split(' ')
  let placed = false
  const out: string[] = []
  for (const w of parts) {
    const ts = tokens(w)
    if (ts.length && ts.every((t) => words.has(t))) {
      if (!placed) out.push(stat.name)
      placed = true
    } else out.push(w)
  }
  if (!placed) return null
  let q = out.join(' ')
  if (stat.kind === 'gauge') q = q.replace(/\b(how many|how much|total( number of)?|number of|sum of|count of)\b/, 'average')
  return q
}
