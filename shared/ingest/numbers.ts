// Number rules for `count` and `value` (docs/decisions.md §I-2.2, §I-7, §I-8; decisions 4a).
// One contract for /ez, /c, /v and the v1 JSON write routes: a JSON number and
// the equivalent decimal string are accepted identically.
import { accept, reject, type Parsed } from './parsed.js'

export type NumberField = 'count' | 'value'

/** Largest accepted magnitude; exactly 1e15 is accepted (docs/decisions.md §I-8). */
export const MAX_MAGNITUDE = 1e15

// Grammar of docs/decisions.md §I-2.2: optional sign, digits, optional fraction, optional
// e/E exponent with optional sign. ASCII digits only (`\d` would be ASCII too,
// but spelling it out keeps a future `u` flag from widening it).
//
// Decision: `.5` and `5.` ARE accepted. "digits, optional fraction" is read as
// "a mantissa with at least one digit on either side of an optional point":
// shell clients that compute with `bc` print `.50` (no leading zero), C's
// `%#.0f` prints `5.`, both are unambiguous, and every mainstream float parser
// (including JS `Number`) reads them the same way. A lone `.`, a lone sign and
// an exponent without digits (`1e`, `1e+`) are still rejected.
// Everything else JS `Number()` would also take (hex `0x1A`, `0b1`, `0o7`,
// `Infinity`, `""`, `1_000`) never reaches `Number()` because it fails here.
export const DECIMAL_TEXT = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/

/** Absent field (not sent at all). The caller decides: /ez and /c record 1, /v and v1 value reject. */
export function isAbsent(x: unknown): x is undefined {
  return x === undefined
}

/**
 * Present-but-empty: null, or a string that is empty after trimming
 * (docs/decisions.md §I-4.1.1: "empty string, whitespace only, JSON empty string or null").
 */
export function isEmptyPresent(x: unknown): boolean {
  return x === null || (typeof x === 'string' && x.trim() === '')
}

/**
 * Parses a decimal string per the grammar above (surrounding whitespace
 * trimmed). Returns the double or undefined when the text is not in the
 * grammar. Shared with timestamps.ts so both fields read text the same way.
 */
export function decimalTextToNumber(text: string): number | undefined {
  const t = text.trim()
  return DECIMAL_TEXT.test(t) ? Number(t) : undefined
}

export function parseNumber(input: unknown, field: NumberField): Parsed<number> {
  if (isAbsent(input)) {
    // The caller should have handled absence (default 1 or its own error);
    // answering anyway keeps the function total. v1 value route: docs/decisions.md §I-4.2.
    return reject(`missing_${field}`, `invalid ${field}: missing`)
  }
  if (isEmptyPresent(input)) {
    return reject(`empty_${field}`, `invalid ${field}: empty`)
  }

  let n: number | undefined
  if (typeof input === 'number') {
    n = input
  } else if (typeof input === 'string') {
    n = decimalTextToNumber(input)
  }
  // Booleans, arrays, objects, bigint, boxed numbers, NaN and non-grammar
  // text all end up here. Never coerce with Number(): Number([5]) is 5,
  // Number(true) is 1 and Number('0x10') is 16.
  if (n === undefined || Number.isNaN(n)) {
    return reject(`invalid_${field}`, `invalid ${field}: not a number`)
  }

  // The bound applies to the double that would be stored. This also catches
  // overflow: the text `1e400` and the JSON number it parses to (Infinity)
  // both land here, which keeps rule 1 ("accepted identically") true for
  // rejections as well. The string "Infinity" is not in the grammar, so it
  // was rejected above as not a number.
  if (!(Math.abs(n) <= MAX_MAGNITUDE)) {
    return reject(`${field}_out_of_range`, `invalid ${field}: out of range`)
  }

  // -0 (from "-0", "-0.0", or an underflowing "-1e-400") is stored as 0 so it
  // never shows up as "-0" in exports or charts.
  return accept(n === 0 ? 0 : n)
}
