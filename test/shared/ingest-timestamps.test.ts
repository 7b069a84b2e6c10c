// docs/decisions.md §I-2.2 timestamp, 4.1.3 (batch sends t as a digit string), 7 messages, 8 window.
import test from 'ava'
import fc from 'fast-check'
import { isBlank, MIN_TIMESTAMP, parseTimestamp } from '../../shared/ingest/timestamps.js'

const NOW = 1_763_700_000 // a fixed "server time" so the tests are deterministic
const MAX = NOW + 300

const TOO_OLD = {
  ok: false,
  code: 'timestamp_too_old',
  message: 'invalid timestamp: before 2000-01-01 (is the client sending an uninitialised value?)',
}
const FUTURE = { ok: false, code: 'timestamp_in_future', message: 'invalid timestamp: too far in the future' }
const NAN = { ok: false, code: 'invalid_timestamp', message: 'invalid timestamp: not a number' }
const EMPTY = { ok: false, code: 'empty_timestamp', message: 'invalid timestamp: empty' }

// ---------------------------------------------------------------- accepted

const ACCEPTED: Array<[string, unknown, number]> = [
  ['integer Unix seconds as a JSON number (client capture)', 1362772440, 1362772440],
  ['t as a digit string (the /ez batch sample)', '1363118126', 1363118126],
  ['surrounding whitespace is trimmed', ' 1363118126\n', 1363118126],
  ['fractions are truncated (JSON number)', 1700000000.9, 1700000000],
  ['fractions are truncated (string, Python str(time.time()))', '1700000000.987654', 1700000000],
  ['exponent form is read like count and value', '1.363118126e9', 1363118126],
  ['from 2000-01-01T00:00:00Z (Unix 946684800) inclusive', MIN_TIMESTAMP, MIN_TIMESTAMP],
  ['from 946684800 inclusive, as a string', '946684800', MIN_TIMESTAMP],
  ['a fraction above 946684800 truncates onto the bound', 946684800.5, MIN_TIMESTAMP],
  ['any past distance inside the window is accepted', 1_000_000_000, 1_000_000_000],
  ['server time is accepted', NOW, NOW],
  ['up to 5 minutes ahead of server time inclusive', MAX, MAX],
  ['a fraction past now + 300 truncates onto the bound', MAX + 0.99, MAX],
]

for (const [rule, input, expected] of ACCEPTED) {
  test(`8 timestamp: ${rule}`, (t) => {
    t.deepEqual(parseTimestamp(input, NOW), { ok: true, value: expected })
  })
}

test('8 timestamp: the upper bound follows the server time given', (t) => {
  t.true(parseTimestamp(2_000_000_300, 2_000_000_000).ok)
  t.deepEqual(parseTimestamp(2_000_000_301, 2_000_000_000), FUTURE)
  t.true(parseTimestamp(2_000_000_300, 2_000_000_000.5).ok, 'fractional server time is fine')
})

// ---------------------------------------------------------------- rejected

const REJECTED: Array<[string, unknown, object]> = [
  ['before 2000-01-01 is rejected (one second early)', 946684799, TOO_OLD],
  ['before 2000-01-01 is rejected (fraction truncated first)', 946684799.9, TOO_OLD],
  ['before 2000-01-01 is rejected (uninitialised 0)', 0, TOO_OLD],
  ['before 2000-01-01 is rejected (uninitialised "0")', '0', TOO_OLD],
  ['before 2000-01-01 is rejected (negative)', -1, TOO_OLD],
  ['before 2000-01-01 is rejected (-Infinity)', -Infinity, TOO_OLD],
  ['more than 5 minutes ahead is rejected', MAX + 1, FUTURE],
  ['more than 5 minutes ahead is rejected (string)', String(MAX + 1), FUTURE],
  ['milliseconds read as a far-future date and are rejected', NOW * 1000, FUTURE],
  ['milliseconds read as a far-future date and are rejected (string)', String(NOW * 1000), FUTURE],
  ['microseconds are rejected as future', '1763700000000000', FUTURE],
  ['a huge literal is rejected as future', '1e400', FUTURE],
  ['Infinity is rejected as future', Infinity, FUTURE],
  ['not a number: letters', 'yesterday', NAN],
  ['not a number: ISO date text', '2024-01-01T00:00:00Z', NAN],
  ['not a number: hexadecimal', '0x6553F100', NAN],
  ['not a number: trailing garbage', '1700000000s', NAN],
  ['not a number: NaN', Number.NaN, NAN],
  ['not a number: "NaN"', 'NaN', NAN],
  ['not a number: boolean', true, NAN],
  ['not a number: array', [1700000000], NAN],
  ['not a number: object', { t: 1700000000 }, NAN],
  ['not a number: bigint', 1700000000n, NAN],
  ["blank input was the caller's to handle (empty string)", '', EMPTY],
  ["blank input was the caller's to handle (null)", null, EMPTY],
  ["blank input was the caller's to handle (undefined)", undefined, EMPTY],
]

for (const [rule, input, expected] of REJECTED) {
  test(`8 timestamp: ${rule}`, (t) => {
    t.deepEqual(parseTimestamp(input, NOW), expected)
  })
}

test('8 timestamp: a NaN server time fails closed', (t) => {
  t.deepEqual(parseTimestamp(1_700_000_000, Number.NaN), FUTURE)
})

test('2.2 timestamp: blank t (absent, null, empty, whitespace) means server receive time (decision)', (t) => {
  for (const x of [undefined, null, '', '   ', '\n']) t.true(isBlank(x), JSON.stringify(x))
  for (const x of [0, '0', 1700000000, '1700000000', false, [], {}, 'x']) t.false(isBlank(x), JSON.stringify(x))
})

// ---------------------------------------------------------------- properties

test('8 timestamp: every whole second in the window is accepted, as a number and as a digit string', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: MIN_TIMESTAMP, max: MAX }), (s) => {
      const a = parseTimestamp(s, NOW)
      const b = parseTimestamp(String(s), NOW)
      return a.ok && a.value === s && b.ok && b.value === s
    }),
  )
  t.pass()
})

test('8 timestamp: fractions are truncated', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: MIN_TIMESTAMP, max: MAX }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (s, f) => {
      const x = s + f
      const expected = Math.trunc(x) // s, or s + 1 when the sum rounds up
      const r = parseTimestamp(x, NOW)
      return expected > MAX ? !r.ok : r.ok && r.value === expected
    }),
  )
  t.pass()
})

test('8 timestamp: outside the window is rejected with the matching message', (t) => {
  const before = fc.integer({ min: -1e12, max: MIN_TIMESTAMP - 1 })
  const after = fc.integer({ min: MAX + 1, max: 1e16 })
  fc.assert(
    fc.property(fc.oneof(before, after), (s) => {
      const expected = s < MIN_TIMESTAMP ? TOO_OLD : FUTURE
      const a = parseTimestamp(s, NOW)
      const b = parseTimestamp(String(s), NOW)
      return [a, b].every((r) => !r.ok && r.code === expected.code && r.message === expected.message)
    }),
  )
  t.pass()
})

test('8 timestamp: no input ever throws; every accepted value is a whole second in the window', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.double(), fc.anything({ withBigInt: true, withBoxedValues: true })),
      (x) => {
        const r = parseTimestamp(x, NOW)
        if (!r.ok) return r.message.startsWith('invalid timestamp: ')
        return Number.isInteger(r.value) && r.value >= MIN_TIMESTAMP && r.value <= MAX
      },
    ),
    { numRuns: 2000 },
  )
  t.pass()
})
