// Timestamp rules for `t` (docs/decisions.md §I-2.2, §I-4.1.3, §I-8).
import { decimalTextToNumber } from './numbers.js'
import { accept, reject, type Parsed } from './parsed.js'

/** 2000-01-01T00:00:00Z. Anything earlier is almost always an uninitialised clock or variable. */
export const MIN_TIMESTAMP = 946684800
/** How far ahead of server time a client clock may run (5 minutes, inclusive). */
export const MAX_FUTURE_SKEW_SECONDS = 300

/**
 * Blank `t`: not sent, null, or an empty/whitespace-only string.
 *
 * Decision: a blank `t` means "no timestamp", i.e. server receive time, NOT a
 * rejection. Legacy clients build bodies from templates (`t=$TS` with an unset
 * variable gives `t=`) and JSON clients serialise an unset optional as
 * `"t": null`; receive time is exactly what those clients meant, and the
 * interface only makes an empty `count`/`value` an error, never an empty `t`.
 * The caller must still know the timestamp was not explicit (replay
 * disclosure and ikey dedup key on an explicit `t`), so this is a separate
 * predicate rather than parseTimestamp quietly returning "now".
 */
export function isBlank(x: unknown): boolean {
  return x === undefined || x === null || (typeof x === 'string' && x.trim() === '')
}

/**
 * Parses an explicit `t` into whole Unix seconds.
 *
 * Accepts a JSON number or a decimal string (the /ez batch sample sends a digit
 * string). Strings use the same grammar as count/value, so `"1363118126"`,
 * `" 1363118126\n"`, `"1700000000.123"` (Python's str(time.time())) and
 * `"1.363118126e9"` all work. Fractions are truncated (docs/decisions.md §I-8). The window
 * check runs after truncation, on the stored second.
 *
 * `nowSeconds` is server time in seconds (fractional is fine); the upper bound
 * is now + 300 inclusive. Millisecond timestamps (13 digits) fall far beyond
 * it and are rejected as "too far in the future", which the interface names
 * as the way they surface.
 */
export function parseTimestamp(input: unknown, nowSeconds: number): Parsed<number> {
  if (isBlank(input)) {
    // Callers check isBlank first; answering keeps the function total.
    return reject('empty_timestamp', 'invalid timestamp: empty')
  }
  let n: number | undefined
  if (typeof input === 'number') n = input
  else if (typeof input === 'string') n = decimalTextToNumber(input)
  if (n === undefined || Number.isNaN(n)) {
    return reject('invalid_timestamp', 'invalid timestamp: not a number')
  }

  // ±Infinity (JSON `1e400`) just fails the window checks below.
  const t = Math.trunc(n)
  if (t < MIN_TIMESTAMP) {
    return reject('timestamp_too_old', 'invalid timestamp: before 2000-01-01 (is the client sending an uninitialised value?)')
  }
  // Written as !(<=) so a NaN `nowSeconds` (a caller bug) fails closed.
  if (!(t <= nowSeconds + MAX_FUTURE_SKEW_SECONDS)) {
    return reject('timestamp_in_future', 'invalid timestamp: too far in the future')
  }
  return accept(t)
}
