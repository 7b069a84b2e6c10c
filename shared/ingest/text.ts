// Text that can reach PostgreSQL is checked where it enters. A UTF-8 database
// cannot hold U+0000 at all (text and jsonb refuse it), and an unpaired UTF-16
// surrogate (`"\ud800"` in JSON) is not a character: encoded for the wire it
// becomes U+FFFD, so what was stored would differ from what was sent. Both are
// refused with a 400 naming the field, before anything is stored; unchecked,
// a NUL in an ikey was accepted and then refused by PostgreSQL in the worker.
import { invalid } from '../errors.js'

// An unpaired surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

// What printable() spells out: C0 and C1 controls (NUL among them), DEL and unpaired surrogates.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `text` with every control character and unpaired surrogate written as its `\uXXXX` escape: input quoted
 * back to the client in a message that is also stored (an import's line errors), which PostgreSQL could
 * not hold as sent and a terminal would act on.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

// Every unstorable text holds one of these: one plain class test decides nearly every string (every field of
// every write passes here), the precise checks below run only on a hit.
const SUSPECT = /[\u0000\uD800-\uDFFF]/

/** Why `text` cannot be stored as sent, or undefined when it can. */
export function unstorableText(text: string): string | undefined {
  if (!SUSPECT.test(text)) return undefined
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored; send text without it'
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text'
  return undefined
}

// In JSON text, a NUL or a surrogate can only arrive as a \u escape (a raw control character is not valid JSON,
// and a decoded UTF-8 body holds no lone surrogate): text without one decodes to storable strings only.
const ESCAPED_SUSPECT = /\\u(?:0000|[dD][89a-fA-F])/

/** Whether the JSON `text` may decode to a string that unstorableText refuses (false: it cannot). */
export function jsonMayHoldUnstorable(text: string): boolean {
  return ESCAPED_SUSPECT.test(text) || SUSPECT.test(text)
}

/**
 * Walks decoded input (a JSON body, a query string, form fields, path
 * parameters) and throws a 400 `invalid_text` naming the first string, or
 * object key, that cannot be stored: `body.channel_config.webhook_url: contains a NUL ...`.
 */
export function assertStorableText(value: unknown, path: string): void {
  // Nearly every body is storable: the walk that names the bad field (a path string built per element, a
  // fifth of checking a 100-point batch) runs only once the plain walk has found one.
  if (!allStorable(value, 0)) namedCheck(value, path, 0)
}

function allStorable(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return unstorableText(value) === undefined
  if (value === null || typeof value !== 'object' || depth > 64) return true
  if (Array.isArray(value)) {
    for (const v of value) if (!allStorable(v, depth + 1)) return false
    return true
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue
    if (unstorableText(k) !== undefined || !allStorable((value as Record<string, unknown>)[k], depth + 1)) return false
  }
  return true
}

function namedCheck(value: unknown, path: string, depth: number): void {
  if (typeof value === 'string') {
    const why = unstorableText(value)
    if (why) throw invalid('invalid_text', `${path}: ${why}`)
    return
  }
  // Bodies are bounded by the size limit; the depth bound only keeps a deeply nested one from recursing far.
  if (value === null || typeof value !== 'object' || depth > 64) return
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) namedCheck(v, `${path}[${i}]`, depth + 1)
    return
  }
  for (const [k, v] of Object.entries(value)) {
    const why = unstorableText(k)
    if (why) throw invalid('invalid_text', `${path}: a field name ${why}`)
    namedCheck(v, path ? `${path}.${k}` : k, depth + 1)
  }
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
// Characters that show nothing, or reorder or hide what follows: format characters (bidi
// overrides such as U+202E, zero-width space U+200B, BOM U+FEFF, soft hyphen U+00AD, tag characters
// U+E0000-E007F), private use (no meaning outside an agreed font), the line and paragraph separators U+2028
// and U+2029 (a line break in all but name), and the Hangul fillers, which are letters that draw as blanks.
const INVISIBLE = /[\p{Cf}\p{Co}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]/gu
// Except the zero-width joiner and non-joiner inside a word or an emoji sequence, where they are part of the
// spelling (Persian and Indic words, 👩‍💻): between two letters, marks or pictographs (a VS16 may precede).
// biome-ignore lint/suspicious/noMisleadingCharacterClass: the joiners are meant as a class of their own, between two letters or pictographs
const JOINER = /[\p{L}\p{M}\p{Extended_Pictographic}\uFE0F][\u200C\u200D][\p{L}\p{M}\p{Extended_Pictographic}]/u

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`

function invisibleIn(text: string): string | undefined {
  INVISIBLE.lastIndex = 0
  for (let m = INVISIBLE.exec(text); m; m = INVISIBLE.exec(text)) {
    const c = m[0]
    if ((c === '\u200C' || c === '\u200D') && m.index > 0 && JOINER.test(text.slice(Math.max(0, m.index - 2), m.index + 3))) continue
    return c
  }
  return undefined
}

/**
 * Why `text` cannot be one line of printable text, or undefined when it can: the one rule of every text field
 * a person reads (a stat's description and unit, an API key's label, an ikey, a dashboard's name and card
 * titles, an imported unit). On top of unstorableText: control characters (BEL, ESC of an ANSI sequence, a
 * newline, DEL, C1), which a log line, a terminal or a table row would act on; invisible characters (see
 * INVISIBLE), with which two texts that look alike differ, or one reads otherwise than it is stored (a
 * U+202E turns "exe.txt" around); and U+FFFD, which is what
 * the body parsers make of bytes that are not UTF-8. Decision: a U+FFFD sent on purpose is refused too;
 * it is never meaningful in these fields, and storing it would keep text that differs from what was sent.
 */
export function unprintableText(text: string): string | undefined {
  const why = unstorableText(text)
  if (why) return why
  const c = CONTROL.exec(text)
  if (c) return `contains a control character (${codePoint(c[0])}), which this field cannot hold; send printable text on one line`
  const hidden = invisibleIn(text)
  if (hidden) return `contains an invisible character (${codePoint(hidden)}), which this field cannot hold; send visible text only`
  if (text.includes('\uFFFD'))
    return 'contains U+FFFD, the replacement character: the bytes sent were not valid UTF-8; send the text encoded as UTF-8'
  return undefined
}

/** Throws a 400 `invalid_text` naming `field` when `text` is not one line of printable text. */
export function assertPrintable(text: string | null | undefined, field: string): void {
  const why = text ? unprintableText(text) : undefined
  if (why) throw invalid('invalid_text', `${field}: ${why}`)
}
