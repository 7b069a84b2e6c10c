// docs/decisions.md §I-2.1 stat name rules, 4.1.1, 7 and 8 (128 characters).
import test from 'ava'
import fc from 'fast-check'
import { MAX_STAT_NAME_LENGTH, parseStatName } from '../../shared/ingest/names.js'

const MISSING = { ok: false, code: 'missing_stat', message: 'invalid stat name: missing' }
const INVALID = { ok: false, code: 'invalid_stat_name', message: 'invalid stat name: contains invalid characters' }
const TOO_LONG = { ok: false, code: 'stat_name_too_long', message: 'invalid stat name: longer than 128 characters' }

// ---------------------------------------------------------------- accepted

const ACCEPTED: Array<[string, string, string]> = [
  ['letters, numbers, spaces are allowed (client capture)', 'messages sent - female to male', 'messages sent - female to male'],
  ['dot is allowed', 'connections.active', 'connections.active'],
  ['underscore and hyphen are allowed', 'api_latency-p99', 'api_latency-p99'],
  ['numbers only are allowed', '404', '404'],
  ['Unicode letters are allowed (decision)', 'Zugriffe über Web', 'Zugriffe über Web'],
  ['Unicode numbers are allowed (decision)', 'fläche m²', 'fläche m²'],
  ['letters with combining marks are allowed (Devanagari)', 'हिन्दी', 'हिन्दी'],
  ['non-Latin scripts are allowed', '日本 注文数', '日本 注文数'],
  ['interior runs of spaces are kept as sent', 'a  b', 'a  b'],
  // the character & is silently removed before the remaining characters are validated
  ['the character & is silently removed', 'sales & returns', 'sales  returns'],
  ['every & is removed', 'a&b&&c', 'abc'],
  ['the character & is removed inside words too', 'R&D', 'RD'],
  // decision: surrounding whitespace is trimmed
  ['surrounding whitespace is trimmed (trailing newline from a shell client)', 'disk used\n', 'disk used'],
  ['surrounding whitespace is trimmed (spaces, tabs, CRLF)', ' \tqueue depth\r\n', 'queue depth'],
  ['trimming runs after & removal (unencoded Node client body cut at &)', 'ws0 load avg &', 'ws0 load avg'],
  // decision: NFC normalisation
  ['decomposed ü is stored as precomposed ü', 'u\u0308ber', '\u00fcber'],
  // 8: exactly 128 characters accepted, counted in code points
  ['exactly 128 characters are allowed', 'x'.repeat(128), 'x'.repeat(128)],
  ['128 astral letters are 128 characters', '𝒜'.repeat(128), '𝒜'.repeat(128)],
  ['& does not count toward the 128', `${'x'.repeat(128)}&&&`, 'x'.repeat(128)],
  ['surrounding whitespace does not count toward the 128', ` ${'x'.repeat(128)} `, 'x'.repeat(128)],
]

for (const [rule, input, stored] of ACCEPTED) {
  test(`2.1 stat name: ${rule}`, (t) => {
    t.deepEqual(parseStatName(input), { ok: true, value: stored })
  })
}

// ---------------------------------------------------------------- rejected

const REJECTED: Array<[string, unknown, object]> = [
  ['name is required (absent)', undefined, MISSING],
  ['name is required (null)', null, MISSING],
  ['name is required (a number is not a name)', 42, MISSING],
  ['name is required (array)', ['cpu'], MISSING],
  ['name is required (object)', { name: 'cpu' }, MISSING],
  ['name is required (empty string)', '', MISSING],
  ['name is required (whitespace only)', '  \n', MISSING],
  ['name that is empty after & removal is missing', '&&&', MISSING],
  ['name that is empty after & removal and trimming is missing', ' & ', MISSING],
  ['every other disallowed character is rejected (slash, Node capture)', 'ws0 load avg / more/ü', INVALID],
  ['every other disallowed character is rejected (colon, batch sample)', 'ws0: load average', INVALID],
  ['every other disallowed character is rejected (tilde and comma, batch sample)', 'messages sent~total,female,europe', INVALID],
  ['every other disallowed character is rejected (plus)', 'a+b', INVALID],
  ['every other disallowed character is rejected (at sign)', 'me@example', INVALID],
  ['every other disallowed character is rejected (percent)', 'cpu%', INVALID],
  ['every other disallowed character is rejected (equals)', 'a=b', INVALID],
  ['every other disallowed character is rejected (quote)', 'a"b', INVALID],
  ['every other disallowed character is rejected (emoji)', 'deploys 🚀', INVALID],
  ['every other disallowed character is rejected (interior tab)', 'a\tb', INVALID],
  ['every other disallowed character is rejected (interior newline)', 'a\nb', INVALID],
  ['every other disallowed character is rejected (interior NBSP)', 'a\u00a0b', INVALID],
  ['every other disallowed character is rejected (zero-width space)', 'a\u200bb', INVALID],
  ['every other disallowed character is rejected (NUL)', 'a\u0000b', INVALID],
  ['every other disallowed character is rejected (lone surrogate)', 'a\ud800b', INVALID],
  ['maximum 128 characters (129 rejected)', 'x'.repeat(129), TOO_LONG],
  ['maximum 128 characters (129 astral letters rejected)', '𝒜'.repeat(129), TOO_LONG],
]

for (const [rule, input, expected] of REJECTED) {
  test(`2.1 stat name: ${rule}`, (t) => {
    t.deepEqual(parseStatName(input), expected)
  })
}

// ---------------------------------------------------------------- properties

const allowedChar = fc.constantFrom(...'abcXYZ019 ._-äßé日本𝒜²'.split(/(?:)/u))
const disallowedChar = fc.constantFrom(...'~,:;/\\+@#%=?!*()[]{}<>|"\'`^$\t\u0000\u200b🚀'.split(/(?:)/u))
const edgeWs = fc.constantFrom('', ' ', '\n', '\r\n', '\t')

const allowedName = fc
  .array(allowedChar, { minLength: 1, maxLength: MAX_STAT_NAME_LENGTH })
  .map((cs) => cs.join(''))
  .filter((s) => s.trim() !== '' && s === s.trim())

test('2.1 stat name: any name of allowed characters up to 128 is stored as sent', (t) => {
  fc.assert(
    fc.property(allowedName, (s) => {
      const r = parseStatName(s)
      return r.ok && r.value === s
    }),
  )
  t.pass()
})

test('2.1 stat name: & anywhere and surrounding whitespace are removed without error', (t) => {
  fc.assert(
    fc.property(allowedName, fc.array(fc.nat()), edgeWs, edgeWs, (s, positions, lead, trail) => {
      const chars = [...s]
      for (const p of positions) chars.splice(p % (chars.length + 1), 0, '&')
      const r = parseStatName(lead + chars.join('') + trail)
      return r.ok && r.value === s
    }),
  )
  t.pass()
})

test('2.1 stat name: every other disallowed character is rejected with the invalid-characters message', (t) => {
  fc.assert(
    fc.property(allowedName, disallowedChar, fc.nat(), (s, bad, p) => {
      const chars = [...s]
      // interior position so trimming cannot remove a whitespace `bad`
      chars.splice(1 + (p % chars.length), 0, bad, 'x')
      const r = parseStatName(`y${chars.join('')}`)
      return !r.ok && r.code === INVALID.code && r.message === INVALID.message
    }),
  )
  t.pass()
})

test('2.1 stat name: longer than 128 characters is rejected', (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom('a', 'é', '𝒜', '_'), { minLength: 129, maxLength: 400 }), (cs) => {
      const r = parseStatName(`n${cs.join('')}`)
      return !r.ok && r.code === TOO_LONG.code && r.message === TOO_LONG.message
    }),
  )
  t.pass()
})

test('2.1 stat name: no input ever throws, and an accepted name is always valid and stable', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.anything()), (x) => {
      const r = parseStatName(x)
      if (!r.ok) return typeof r.code === 'string' && r.message.startsWith('invalid stat name: ')
      // idempotent: storing the stored name again yields the same name
      const again = parseStatName(r.value)
      return !r.value.includes('&') && r.value === r.value.trim() && again.ok && again.value === r.value
    }),
    { numRuns: 2000 },
  )
  t.pass()
})

test('2.1 stat name: ASCII input (the fast path) gives exactly what the documented steps give', (t) => {
  const steps = (s: string) => {
    const name = s.replaceAll('&', '').trim().normalize('NFC')
    if (name === '') return 'missing'
    if (!/^[\p{L}\p{M}\p{N} ._-]+$/u.test(name)) return 'invalid'
    return [...name].length > 128 ? 'too long' : name
  }
  const outcome = (s: string) => {
    const p = parseStatName(s)
    return p.ok ? p.value : p.code === 'missing_stat' ? 'missing' : p.code === 'invalid_stat_name' ? 'invalid' : 'too long'
  }
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(...'aZ09 ._-&\t\n~+'.split('')), maxLength: 140 }), (s) => {
      t.is(outcome(s), steps(s), JSON.stringify(s))
    }),
    { numRuns: 2000 },
  )
})
