// POST /api/v1/query end to end: parse the question, retrieve from the
// rollups, draft an answer from templates, verify it, and let the optional
// model reword it only when its wording passes the same verifier and the
// placeholder rules. Every path returns an answer; none emits a number that
// the verifier did not match against `data`.
import type { Config } from '../config.js'
import type { Db } from '../db.js'
import type { Logger } from '../log.js'
import { aggregateAnswer, breakdownAnswer, compareAnswer, groupAnswer, peakAnswer, percentileAnswer, rankAnswer } from './answer.js'
import { Draft } from './draft.js'
import { parseIntent, type ParsedIntent } from './intent.js'
import type { StatRef } from './match.js'
import { checkSentence, narrate } from './narrate.js'
import type { Span } from './periods.js'
import { accountStats } from './retrieve.js'
import type { Intent, QueryBody, QueryResponse } from './schema.js'
import { describeVerdict, verify } from './verify.js'

export interface QueryDeps {
  sql: Db
  config: Pick<Config, 'queryLlm'>
  log?: Logger
}

const periodJson = (p: Span) => ({ from: p.from.toISOString(), to: p.to.toISOString(), label: p.label })

function intentJson(i: ParsedIntent, zone: string): Intent {
  return {
    op: i.op,
    agg: i.agg,
    ...(i.percentiles ? { percentiles: i.percentiles } : {}),
    ...(i.order ? { order: i.order } : {}),
    stats: i.stats.map((s) => s.base ?? s.name),
    ...(i.filter ? { filter: i.filter } : {}),
    ...(i.groupBy ? { group_by: i.groupBy } : {}),
    window: i.window ? periodJson(i.window) : null,
    ...(i.compareTo ? { compare_to: periodJson(i.compareTo) } : {}),
    ...(i.context ? { context: periodJson(i.context) } : {}),
    ...(i.stretch ? { stretch: i.stretch } : {}),
    timezone: zone,
    matched: i.matched.map((m) => ({ phrase: m.phrase, stat: m.stat.name, how: m.how, score: m.score })),
    ...(i.candidates ? { candidates: i.candidates } : {}),
    ...(i.suggestions?.length ? { suggestions: i.suggestions } : {}),
    ...(i.bucket ? { bucket_seconds: i.bucket } : {}),
    ...(i.reason ? { reason: i.reason } : {}),
  }
}

/** The honest answer to a question the engine cannot read with confidence: no number, the closest stats named. */
function declineDraft(i: ParsedIntent, stats: StatRef[]): Draft {
  const d = new Draft()
  d.source = 'template'
  const kinds = new Map(stats.map((s) => [s.name, s.kind]))
  const names = (i.candidates ?? []).map((n) => d.stat(n, kinds.get(n) ?? 'counter'))
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}` : names[0]
  if (i.percentile) {
    const asked = (i.candidates ?? []).map((n) => d.stat(n, kinds.get(n) ?? 'counter'))
    const of = asked.length > 1 ? `${asked.slice(0, -1).join(', ')} and ${asked[asked.length - 1]}` : asked[0]
    // Percentiles are kept for gauges only (decision 20): a counter's values are counts, added up per bucket.
    d.text = `${of} ${asked.length > 1 ? 'are counters' : 'is a counter'}, so I can't give a percentile: only gauges have percentiles (a counter's values are counts, added up). I can give ${asked.length > 1 ? 'each' : 'its'} total, a comparison of two periods, a breakdown by hour or day, or when it peaked.`
  } else if (i.tagValues) {
    // Declined over tags: the stat's tags are named (quoted, like stat names: a tag value may hold digits).
    const values = i.tagValues.map((v) => d.stat(v, 'tag'))
    const of = d.stat(i.tagStat ?? '', kinds.get(i.tagStat ?? '') ?? 'counter')
    d.text = `I can't answer that: ${i.reason}.${values.length ? ` The series of ${of} are tagged ${values.join(', ')}.` : ''}`
  } else if (i.unsupported) d.text = `I can't answer that: ${i.reason}.`
  // The period's own words are not repeated (they may hold digits no data grounds).
  else if (i.unreadPeriod)
    d.text =
      "I couldn't read the period in this question. I understand periods such as today, yesterday, the last 6 hours, this or last week or month, since Monday, on a date, or between two dates (in your account's time zone)."
  else if (!stats.length) d.text = 'This account has no stats yet, so there is nothing to answer from.'
  // The question's own words are not repeated: they could carry digits that no data grounds.
  else if (names.length && i.unlike)
    d.text = `None of your stats is named like that, so I won't guess. Your ${stats.filter((s) => names.includes(s.name)).every((s) => s.kind === 'counter') ? 'counters' : 'stats'} include ${list}.`
  else if (names.length && i.reason?.startsWith('no stat is named'))
    d.text = `None of your stats is named like that, so I won't guess. The closest by name are ${list}.`
  else if (names.length) d.text = `I'm not sure which stat you mean, so I won't guess. Did you mean ${list}?`
  else d.text = "I couldn't match this question to any of your stats, so I won't guess an answer."
  return d
}

async function draftFor(sql: Db, i: ParsedIntent, stats: StatRef[]): Promise<Draft> {
  switch (i.op) {
    case 'aggregate':
      return i.groupBy ? groupAnswer(sql, i) : i.agg === 'percentile' ? percentileAnswer(sql, i) : aggregateAnswer(sql, i)
    case 'compare':
      return compareAnswer(sql, i)
    case 'rank':
      return rankAnswer(sql, i)
    case 'peak':
      return peakAnswer(sql, i)
    case 'breakdown':
      return breakdownAnswer(sql, i)
    default:
      return declineDraft(i, stats)
  }
}

/** Answers one question for one account at `now`, reading its periods in `body.time_zone` (UTC when absent). */
export async function answerQuestion(deps: QueryDeps, accountId: string, body: QueryBody, now = new Date()): Promise<QueryResponse> {
  const stats = await accountStats(deps.sql, accountId)
  const zone = body.time_zone ?? 'UTC'
  const intent = { ...parseIntent(body.query, stats, now, zone), zone }
  let draft = await draftFor(deps.sql, intent, stats)
  let answer = draft.fill()
  let verdict = verify(answer, draft.data, draft.quoted())
  if (!verdict.ok) {
    // A template that fails its own check is a bug; the user still gets no unverified number.
    deps.log?.error('query template failed verification', { op: intent.op, verifier: describeVerdict(verdict) })
    draft = new Draft()
    draft.source = 'template'
    draft.text = 'I could not produce an answer I can verify against your data.'
    answer = draft.fill()
    verdict = verify(answer, draft.data)
  }
  const base = { data: draft.data, intent: intentJson(intent, zone) }
  const deterministic = { ...base, answer, source: draft.source, llm_used: false }
  const checked = describeVerdict(verdict)
  const llm = deps.config.queryLlm
  if (!llm || draft.source === 'template') return { ...deterministic, verifier: checked }
  if (body.residency === 'us')
    return {
      ...deterministic,
      verifier: `${checked}; model not used: residency "us" is not available yet, so the deterministic engine answered`,
    }

  const narration = await narrate(llm, draft)
  let refused: string
  if (narration.ok) {
    const worded = draft.fill(narration.sentence)
    const v = verify(worded, draft.data, draft.quoted())
    const rule = v.ok ? checkSentence(narration.sentence, draft) : null
    if (v.ok && !rule) return { ...base, answer: worded, source: 'llm', llm_used: true, verifier: `${describeVerdict(v)} (model wording)` }
    refused = v.ok ? `model wording refused: ${rule}` : `model wording ${describeVerdict(v)}`
  } else refused = `model not used: ${narration.reason}`
  deps.log?.warn('query model fallback', { reason: refused })
  return { ...deterministic, verifier: `${checked}; ${refused}; deterministic answer returned` }
}
