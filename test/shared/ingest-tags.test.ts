// Tag sets (docs/decisions.md §24): the canonical text every series key is built from, and the value rule's
// quick path for printable ASCII, held to the plain definitions they replace on random tag sets.
import test from 'ava'
import fc from 'fast-check'
import { MAX_TAG_VALUE_LENGTH, parseTags, pointTags, protocolTags, seriesKey, tagsText } from '../../shared/ingest/tags.js'
import { unprintableText } from '../../shared/ingest/text.js'

const key = fc.constantFrom('host', 'region', 'service', 'a', 'b.c', 'z_9', 'env-x')
const valueChar = fc.constantFrom(
  'a',
  'Z',
  '0',
  ' ',
  '~',
  '"',
  '\\',
  'é',
  '日',
  '😀',
  '\u0000',
  '\u0007',
  '\u007f',
  '\u200B',
  '\uFFFD',
  '\uD800',
)
const value = fc.oneof(
  fc.array(valueChar, { maxLength: 6 }).map((c) => c.join('')),
  fc.constantFrom('x'.repeat(MAX_TAG_VALUE_LENGTH), 'x'.repeat(MAX_TAG_VALUE_LENGTH + 1), '😀'.repeat(MAX_TAG_VALUE_LENGTH)),
)

/** The value rule as written before the quick path: 1 to 200 code points, printable text. */
function valueOk(v: string): boolean {
  const n = [...v].length
  return n >= 1 && n <= MAX_TAG_VALUE_LENGTH && unprintableText(v) === undefined
}

test('tagsText is the JSON of the sorted [key, value] pairs, whatever the order', (t) => {
  fc.assert(
    fc.property(fc.dictionary(key, value, { maxKeys: 6 }), fc.boolean(), (tags, reverse) => {
      const keys = Object.keys(tags).sort()
      const reordered = Object.fromEntries((reverse ? [...keys].reverse() : keys).map((k) => [k, tags[k]]))
      const expected = JSON.stringify(keys.map((k) => [k, tags[k]]))
      t.is(tagsText(tags), expected)
      t.is(tagsText(reordered), expected)
      if (keys.length) t.is(seriesKey('cpu', reordered), `cpu\u0000${expected}`)
    }),
    { numRuns: 1000 },
  )
})

test('a tag value is accepted exactly when it is 1 to 200 printable characters', (t) => {
  fc.assert(
    fc.property(value, (v) => {
      const parsed = parseTags({ host: v })
      t.is(parsed.ok, valueOk(v), JSON.stringify(v))
    }),
    { numRuns: 2000 },
  )
})

test('tag sets in any order are one set; keys come out sorted', (t) => {
  const a = parseTags({ service: 'api', host: 'web1', region: 'eu' })
  const b = parseTags({ host: 'web1', region: 'eu', service: 'api' })
  t.true(a.ok && b.ok)
  if (!a.ok || !b.ok) return
  t.deepEqual(Object.keys(a.value!), ['host', 'region', 'service'])
  t.deepEqual(a.value, b.value)
  // A protocol's repeated key keeps its last value, as before.
  const p = protocolTags([
    ['Host', 'a'],
    ['host', 'b'],
  ])
  t.deepEqual(p.ok && p.value, { host: 'b' })
})

test('pointTags answers as parseTags and seriesKey do, the second time as the first', (t) => {
  fc.assert(
    fc.property(fc.constantFrom('cpu', 'mem', 'a b'), fc.dictionary(key, value, { maxKeys: 4 }), (name, raw) => {
      const expected = parseTags(raw)
      for (let i = 0; i < 2; i++) {
        const got = pointTags(name, raw)
        t.is(got.ok, expected.ok)
        if (got.ok && expected.ok)
          t.deepEqual(got.value, expected.value ? { tags: expected.value, series: seriesKey(name, expected.value) } : undefined)
      }
    }),
    { numRuns: 1000 },
  )
  // Remembered sets are told apart by every character: a NUL cannot make a bad set read as a good one.
  t.true(pointTags('cpu', { a: 'x', b: 'y' }).ok)
  t.false(pointTags('cpu', { a: 'x\u0000b\u0001y' }).ok)
  t.false(pointTags('cpu', { a: 'x', b: 'y', c: 7 }).ok)
  t.deepEqual(pointTags('cpu', {}), { ok: true, value: undefined })
  // Nor a part or an extension of a remembered set, nor the same tags on another stat; keys in another order are the same series.
  t.deepEqual(pointTags('cpu', { a: 'x' }), { ok: true, value: { tags: { a: 'x' }, series: seriesKey('cpu', { a: 'x' }) } })
  t.false(pointTags('cpu', { a: 'x', b: 'y', 'Bad key': 'z' }).ok)
  t.is((pointTags('mem', { a: 'x', b: 'y' }) as { value: { series: string } }).value.series, seriesKey('mem', { a: 'x', b: 'y' }))
  t.deepEqual(pointTags('cpu', { b: 'y', a: 'x' }), pointTags('cpu', { a: 'x', b: 'y' }))
})
