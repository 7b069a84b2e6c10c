// Stat name rules (docs/decisions.md §I-2.1, §I-4.1.1, §I-8).
import { accept, reject, type Parsed } from './parsed.js'

/** Maximum length in characters (Unicode code points, as Postgres counts varchar). */
export const MAX_STAT_NAME_LENGTH = 128

// "Letters, numbers, spaces, dot, underscore, hyphen".
// Decision: letters and numbers are Unicode, not just ASCII. The interface
// does not say ASCII, the predecessor's own Node client sample sends `ü`, and
// people name stats in their language ("Zugriffe über Web", "m²"). \p{M}
// (combining marks) is included because many scripts (Devanagari, Thai...)
// cannot spell a word with \p{L} alone. Only U+0020 counts as a space: tabs,
// newlines, NBSP, zero-width characters and controls are rejected inside a
// name, so two names that look identical are identical.
const ALLOWED = /^[\p{L}\p{M}\p{N} ._-]+$/u
// A subset of ALLOWED that is already trimmed, NFC and one code point per character.
const ASCII_NAME = /^[A-Za-z0-9._-](?:[A-Za-z0-9 ._-]*[A-Za-z0-9._-])?$/

/**
 * Validates a stat name and returns the name to store.
 *
 * Order, and why:
 * 1. Non-strings (absent, null, numbers, objects) are "missing": the name must
 *    be text.
 * 2. Every `&` is removed silently (docs/decisions.md §I-2.1). It happens first because
 *    it is what the predecessor did and clients depend on the stored name.
 * 3. Surrounding whitespace is trimmed. Decision: yes, because real clients
 *    produce it by accident: shell scripts pass `$(cat file)`/`echo` output
 *    with a trailing newline, and an unencoded form body like the Node
 *    client's `stat=ws0 load+avg & more` is cut at the `&` into
 *    `ws0 load avg ` (trailing space). A name differing only in edge
 *    whitespace would be an invisible duplicate in the dashboard. Trimming
 *    runs after `&` removal so `"cpu &"` becomes `"cpu"`. Interior spaces are
 *    kept as sent (they are significant and allowed).
 * 4. NFC normalisation, so the precomposed and decomposed spellings of `ü`
 *    (macOS file names, some keyboards) are the same stat. No-op for ASCII.
 *    Readers that look a stat up by name must use this function too.
 * 5. Empty -> missing; bad characters -> invalid; too long -> too long.
 */
export function parseStatName(input: unknown): Parsed<string> {
  if (typeof input !== 'string') return missing()
  // Most names are plain ASCII with nothing to remove, trim or normalise: checked once, in one pass.
  if (input.length <= MAX_STAT_NAME_LENGTH && ASCII_NAME.test(input)) return accept(input)
  const name = input.replaceAll('&', '').trim().normalize('NFC')
  if (name === '') return missing()
  if (!ALLOWED.test(name)) {
    return reject('invalid_stat_name', 'invalid stat name: contains invalid characters')
  }
  // Code points, not UTF-16 units: an astral letter is one character.
  if ([...name].length > MAX_STAT_NAME_LENGTH) {
    return reject('stat_name_too_long', `invalid stat name: longer than ${MAX_STAT_NAME_LENGTH} characters`)
  }
  return accept(name)
}

function missing(): Parsed<string> {
  return reject('missing_stat', 'invalid stat name: missing')
}
