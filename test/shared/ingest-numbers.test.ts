// docs/decisions.md §I-2.2 number rules, 7 messages, 8 magnitude limit, decisions 4a.
import test from 'ava'
import fc from 'fast-check'
import { isAbsent, isEmptyPresent, parseNumber, type NumberField } from '../../shared/ingest/numbers.js'

const FIELDS: NumberField[] = ['count', 'value']

function accepts(input: unknown, expected: number, field: NumberField = 'count') {
  const r = parseNumber(input, field)
  return r.ok && Object.is(r.value, expected)
}

// ---------------------------------------------------------------- accepted

const ACCEPTED: Array<[string, unknown, number]> = [
  // decisions 4a: numbers as real clients format them
  ['client format 1', '1', 1],
  ['client format 1.0 (Java shlibs)', '1.0', 1],
  ['client format 92.194000 (printf %f)', '92.194000', 92.194],
  ['client format 1e+06', '1e+06', 1e6],
  ['client format 1e-05', '1e-05', 1e-5],
  ['client format 1.0E7', '1.0E7', 1e7],
  ['capture value 0.372', '0.372', 0.372],
  ['capture value 85092', '85092', 85092],
  ['negative', '-3', -3],
  ['explicit plus sign', '+2', 2],
  ['leading zeros', '007', 7],
  ['exponent without sign', '2e3', 2000],
  ['negative exponent sign on fraction', '-2.5E-3', -0.0025],
  // documented decision: a digit on either side of the point suffices
  ['leading point (.5, as bc prints)', '.5', 0.5],
  ['trailing point (5.)', '5.', 5],
  ['signed leading point', '-.5', -0.5],
  ['trailing point with exponent', '5.e2', 500],
  // 2.2 rule 2: surrounding whitespace trimmed
  ['surrounding spaces', '  42  ', 42],
  ['trailing newline', '42\n', 42],
  ['tabs and CRLF', '\t42\r\n', 42],
  // 2.2 rule 1: JSON numbers identically
  ['JSON number integer', 3, 3],
  ['JSON number fraction', 23.094, 23.094],
  ['JSON number negative', -7.5, -7.5],
  // 2.2 rule 4 and -0
  ['count=0 stores 0', '0', 0],
  ['JSON 0 stores 0', 0, 0],
  ['-0 text stores 0', '-0', 0],
  ['-0.0 text stores 0', '-0.0', 0],
  ['JSON -0 stores 0', -0, 0],
  ['underflow to -0 stores 0', '-1e-400', 0],
  // 8: exactly 1e15 accepted
  ['exactly 1e15 as text', '1e15', 1e15],
  ['exactly -1e15 as text', '-1000000000000000', -1e15],
  ['exactly 1e15 as JSON number', 1e15, 1e15],
  ['exactly -1e15 as JSON number', -1e15, -1e15],
]

for (const [name, input, expected] of ACCEPTED) {
  test(`2.2 number: accepted: ${name}`, (t) => {
    for (const field of FIELDS) {
      const r = parseNumber(input, field)
      t.deepEqual(r, { ok: true, value: expected }, `${field}=${JSON.stringify(input)}`)
      if (r.ok) t.true(Object.is(r.value, expected), 'no -0 is stored')
    }
  })
}

test('2.2 number: a plain decimal string and the equivalent JSON number are accepted identically', (t) => {
  for (const [text, num] of [
    ['1', 1],
    ['0.372', 0.372],
    ['1e+06', 1e6],
    ['-3', -3],
    ['1e15', 1e15],
  ] as const) {
    t.deepEqual(parseNumber(text, 'value'), parseNumber(num, 'value'))
  }
})

// ---------------------------------------------------------------- rejected

type Kind = 'not a number' | 'out of range' | 'empty'
const CODE: Record<Kind, (f: NumberField) => string> = {
  'not a number': (f) => `invalid_${f}`,
  'out of range': (f) => `${f}_out_of_range`,
  empty: (f) => `empty_${f}`,
}

const REJECTED: Array<[string, unknown, Kind]> = [
  ['hexadecimal text is rejected (0x1A)', '0x1A', 'not a number'],
  ['hexadecimal text is rejected (0X10)', '0X10', 'not a number'],
  ['binary/octal literal text is rejected', '0b101', 'not a number'],
  ['octal literal text is rejected', '0o17', 'not a number'],
  ['trailing garbage is rejected (12abc)', '12abc', 'not a number'],
  ['trailing garbage is rejected (5 apples)', '5 apples', 'not a number'],
  ['trailing garbage is rejected (1.2.3)', '1.2.3', 'not a number'],
  ['trailing garbage is rejected (1e5x)', '1e5x', 'not a number'],
  ['leading garbage is rejected ($5)', '$5', 'not a number'],
  ['inner whitespace is rejected', '1 000', 'not a number'],
  ['digit separators are rejected', '1_000', 'not a number'],
  ['thousands comma is rejected', '1,000', 'not a number'],
  ['decimal comma is rejected', '1,5', 'not a number'],
  ['non-ASCII digits are rejected', '１２', 'not a number'],
  ['exponent without digits is rejected', '1e', 'not a number'],
  ['exponent sign without digits is rejected', '1e+', 'not a number'],
  ['bare exponent is rejected', 'e5', 'not a number'],
  ['lone point is rejected', '.', 'not a number'],
  ['lone sign is rejected', '-', 'not a number'],
  ['double sign is rejected', '--1', 'not a number'],
  ['sign after whitespace gap is rejected', '- 1', 'not a number'],
  ['booleans are rejected (true)', true, 'not a number'],
  ['booleans are rejected (false)', false, 'not a number'],
  ['boolean text is rejected', 'true', 'not a number'],
  ['arrays are rejected (empty)', [], 'not a number'],
  ['arrays are rejected ([5])', [5], 'not a number'],
  ['arrays are rejected (["5"])', ['5'], 'not a number'],
  ['objects are rejected', {}, 'not a number'],
  ['objects are rejected ({value: 5})', { value: 5 }, 'not a number'],
  ['boxed numbers are rejected', new Number(5), 'not a number'],
  ['bigint is rejected', 5n, 'not a number'],
  ['NaN is rejected', Number.NaN, 'not a number'],
  ['NaN is rejected (as string)', 'NaN', 'not a number'],
  ['Infinity is rejected (as string)', 'Infinity', 'not a number'],
  ['Infinity is rejected (as string -Infinity)', '-Infinity', 'not a number'],
  ['Infinity is rejected (as string inf)', 'inf', 'not a number'],
  // Infinity as a JSON number only arises from an overflowing literal such as
  // 1e400; the same text as a string is out of range, so the number is too.
  ['Infinity is rejected (as JSON number, out of range like the text 1e400)', Infinity, 'out of range'],
  ['Infinity is rejected (as JSON number -Infinity)', -Infinity, 'out of range'],
  ['any magnitude above 1e15 is rejected (text 1e16)', '1e16', 'out of range'],
  ['any magnitude above 1e15 is rejected (text 1000000000000001)', '1000000000000001', 'out of range'],
  ['any magnitude above 1e15 is rejected (text 1000000000000000.5)', '1000000000000000.5', 'out of range'],
  ['any magnitude above 1e15 is rejected (text -1e16)', '-1e16', 'out of range'],
  ['any magnitude above 1e15 is rejected (text 1e400 overflows)', '1e400', 'out of range'],
  ['any magnitude above 1e15 is rejected (JSON 1e15+2)', 1e15 + 2, 'out of range'],
  ['any magnitude above 1e15 is rejected (JSON -1.5e15)', -1.5e15, 'out of range'],
  ['any magnitude above 1e15 is rejected (JSON MAX_VALUE)', Number.MAX_VALUE, 'out of range'],
  ['empty strings are rejected', '', 'empty'],
  ['whitespace-only strings are rejected (spaces)', '   ', 'empty'],
  ['whitespace-only strings are rejected (newline/tab)', '\n\t', 'empty'],
  ['whitespace-only strings are rejected (NBSP)', '\u00a0', 'empty'],
  ['null is rejected (empty but present)', null, 'empty'],
]

for (const [name, input, kind] of REJECTED) {
  test(`2.2 number: ${name}`, (t) => {
    for (const field of FIELDS) {
      t.deepEqual(
        parseNumber(input, field),
        { ok: false, code: CODE[kind](field), message: `invalid ${field}: ${kind}` },
        `${field}=${String(input)}`,
      )
    }
  })
}

test('7 messages: exact texts of the interface', (t) => {
  t.like(parseNumber('abc', 'count'), { message: 'invalid count: not a number' })
  t.like(parseNumber('1e16', 'count'), { message: 'invalid count: out of range' })
  t.like(parseNumber('abc', 'value'), { message: 'invalid value: not a number' })
  t.like(parseNumber('1e16', 'value'), { message: 'invalid value: out of range' })
})

test('4.2: an absent value is the error "invalid value: missing" (callers check isAbsent first)', (t) => {
  t.deepEqual(parseNumber(undefined, 'value'), { ok: false, code: 'missing_value', message: 'invalid value: missing' })
  t.deepEqual(parseNumber(undefined, 'count'), { ok: false, code: 'missing_count', message: 'invalid count: missing' })
})

test('4.1.1: absent (undefined) is told apart from empty but present', (t) => {
  t.true(isAbsent(undefined))
  for (const x of [null, '', ' ', 0, '0', false]) t.false(isAbsent(x), String(x))
  for (const x of [null, '', '  ', '\r\n']) t.true(isEmptyPresent(x), JSON.stringify(x))
  for (const x of [undefined, 0, '0', ' 0 ', [], {}]) t.false(isEmptyPresent(x), JSON.stringify(x))
})

// ---------------------------------------------------------------- properties

const inRange = fc.double({ min: -1e15, max: 1e15, noNaN: true })

test('2.2 number: every finite double within ±1e15 is accepted as a JSON number and stored as itself', (t) => {
  fc.assert(fc.property(inRange, (x) => accepts(x, x === 0 ? 0 : x)))
  t.pass()
})

test('2.2 number: every finite double within ±1e15 round-trips through String(x), JSON and toExponential()', (t) => {
  fc.assert(
    fc.property(inRange, fc.integer({ min: 0, max: 20 }), (x, d) =>
      [String(x), JSON.stringify(x), x.toExponential(), x.toExponential(d), x.toExponential(d).toUpperCase()].every((text) =>
        accepts(text, Number(text) || 0),
      ),
    ),
  )
  t.pass()
})

test('2.2 number: every finite double within ±1e15 round-trips through toFixed(n)', (t) => {
  fc.assert(
    fc.property(inRange, fc.integer({ min: 0, max: 100 }), (x, n) => {
      const text = x.toFixed(n)
      return accepts(text, Number(text) || 0) && accepts(` ${text}\n`, Number(text) || 0)
    }),
  )
  t.pass()
})

test('2.2 number: any magnitude above 1e15 is rejected as out of range, as text and as JSON number', (t) => {
  const above = fc.double({ min: 1e15, noNaN: true, noDefaultInfinity: true }).filter((x) => x > 1e15)
  fc.assert(
    fc.property(above, fc.boolean(), (m, neg) => {
      const x = neg ? -m : m
      return [x, String(x), x.toExponential()].every((input) => {
        const r = parseNumber(input, 'value')
        return !r.ok && r.code === 'value_out_of_range' && r.message === 'invalid value: out of range'
      })
    }),
  )
  t.pass()
})

// Grammar-shaped strings with an independent, structural verdict: generated
// from pieces, valid exactly when the pieces form the interface's grammar.
const piece = {
  ws: fc.constantFrom('', ' ', '  ', '\t', '\n', '\r\n'),
  sign: fc.constantFrom('', '+', '-', '+-', '--'),
  digits: fc.stringMatching(/^[0-9]{0,6}$/),
  point: fc.constantFrom('', '.', '..', ','),
  expMark: fc.constantFrom('e', 'E', 'x', 'e.'),
  // Never valid on its own or after a number (so the verdict stays simple).
  junk: fc.constantFrom('', 'a', 'x', '0x', '_', 'a1', 'NaN', '%', '\u0000'),
}

test('2.2 number: a string is accepted exactly when it follows the grammar (sign, digits, fraction, exponent)', (t) => {
  const exponent = fc.option(fc.record({ mark: piece.expMark, sign: piece.sign, digits: piece.digits }), { nil: undefined })
  fc.assert(
    fc.property(
      fc.record({
        lead: piece.ws,
        sign: piece.sign,
        int: piece.digits,
        point: piece.point,
        frac: piece.digits,
        exp: exponent,
        junk: piece.junk,
        trail: piece.ws,
      }),
      (p) => {
        const expText = p.exp ? p.exp.mark + p.exp.sign + p.exp.digits : ''
        const text = p.lead + p.sign + p.int + p.point + p.frac + expText + p.junk + p.trail
        const oneSign = (s: string) => s === '' || s === '+' || s === '-'
        const valid =
          oneSign(p.sign) &&
          (p.point === '' || p.point === '.') &&
          p.int.length + p.frac.length > 0 &&
          (!p.exp || ((p.exp.mark === 'e' || p.exp.mark === 'E') && oneSign(p.exp.sign) && p.exp.digits.length > 0)) &&
          p.junk === ''
        const r = parseNumber(text, 'count')
        if (!valid) return !r.ok
        const n = Number(text.trim())
        return Math.abs(n) <= 1e15 ? r.ok && r.value === (n || 0) : !r.ok && r.code === 'count_out_of_range'
      },
    ),
    { numRuns: 3000 },
  )
  t.pass()
})

test('2.2 number: every string that is not accepted yields ok:false, and an accepted one is its own Number()', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), (s) => {
      const r = parseNumber(s, 'value')
      if (!r.ok) return typeof r.code === 'string' && r.message.startsWith('invalid value: ')
      return Number.isFinite(r.value) && Math.abs(r.value) <= 1e15 && r.value === Number(s.trim())
    }),
    { numRuns: 2000 },
  )
  t.pass()
})

test('2.2 number: no input ever throws', (t) => {
  fc.assert(
    fc.property(fc.anything({ withBigInt: true, withBoxedValues: true, withNullPrototype: true, withTypedArray: true }), (x) => {
      for (const field of FIELDS) parseNumber(x, field)
    }),
  )
  t.pass()
})
