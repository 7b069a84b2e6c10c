// The optional model: an OpenAI-compatible chat-completions server rewords a
// draft whose facts are opaque placeholders. It never sees a number, a stat
// name or a period, and its sentence is refused when it holds a digit or a
// number word outside the placeholders, names a placeholder it was not given,
// or drops a value. Plain fetch (the `openai` SDK needs Node 22).
import type { Config } from '../config.js'
import type { Draft } from './draft.js'

export type Narration = { ok: true; sentence: string } | { ok: false; reason: string }

type LlmConfig = NonNullable<Config['queryLlm']>

const SYSTEM = [
  "You reword short factual answers about a user's metrics so that they read naturally, in one or two sentences.",
  'Every stat name, period, time and number is a placeholder such as {{S1}}, {{P1}}, {{T1}} or {{V1}}.',
  'Rules: keep every {{V…}} placeholder exactly once or more; use only the placeholders given; never write a digit or a number in words;',
  'do not add facts, causes, advice or units; keep the meaning of every word such as up, down, highest, lowest.',
  'Reply with the reworded answer only.',
].join(' ')

const NUMBER_WORDS =
  /\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|trillion|dozen|half|double|twice|triple|percent)\b/i

/** Checks a model's sentence against the draft's placeholders; the reason it is refused, or null. */
export function checkSentence(sentence: string, draft: Draft): string | null {
  const tokens = [...sentence.matchAll(/\{\{([A-Z]\d+)\}\}/g)].map((m) => m[1])
  const unknown = tokens.filter((t) => !draft.placeholders.some((p) => p.token === t))
  if (unknown.length) return `unknown placeholder ${unknown[0]}`
  const outside = sentence.replace(/\{\{[A-Z]\d+\}\}/g, ' ')
  const digit = /\d+/.exec(outside)
  if (digit) return `digit outside the placeholders (${digit[0]})`
  const word = NUMBER_WORDS.exec(outside)
  if (word) return `number word outside the placeholders (${word[0]})`
  const dropped = draft.placeholders.filter((p) => p.kind === 'value' && !tokens.includes(p.token))
  if (dropped.length) return `value placeholder ${dropped[0].token} left out`
  return null
}

/** Asks the model to reword the draft; any failure is a reason, never an exception. The caller verifies and checks the sentence. */
export async function narrate(llm: LlmConfig, draft: Draft): Promise<Narration> {
  const user = JSON.stringify({
    answer: draft.text,
    placeholders: draft.placeholders.map((p) => ({ placeholder: `{{${p.token}}}`, stands_for: p.meaning })),
  })
  let res: Response
  let body: string
  const signal = AbortSignal.timeout(llm.timeoutMs)
  try {
    res = await fetch(`${llm.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(llm.apiKey ? { authorization: `Bearer ${llm.apiKey}` } : {}) },
      body: JSON.stringify({
        model: llm.model,
        temperature: 0,
        max_tokens: 300,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: user },
        ],
      }),
      signal,
      redirect: 'error',
    })
    body = await res.text()
  } catch (err) {
    const e = err as Error
    return {
      ok: false,
      reason:
        e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${llm.timeoutMs} ms` : `request failed (${e.message})`,
    }
  }
  if (!res.ok) return { ok: false, reason: `HTTP ${res.status}` }
  let content: unknown
  try {
    content = (JSON.parse(body) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content
  } catch {
    return { ok: false, reason: 'response was not JSON' }
  }
  if (typeof content !== 'string' || !content.trim()) return { ok: false, reason: 'response held no message content' }
  const sentence = content.trim().replace(/^["'“]|["'”]$/g, '')
  if (sentence.length > 800) return { ok: false, reason: 'answer too long' }
  return { ok: true, sentence }
}
