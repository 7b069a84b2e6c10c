// The legacy form reader's plain path (api/middleware/legacy-body.ts parseForm, docs/decisions.md §4a): a form
// without `%` or `+` is split by hand; it must read every such text exactly as URLSearchParams does (which still
// reads the others), first value of a repeated key kept, `data` and empty names left out. And the text check's
// quick class test (shared/ingest/text.ts) must agree with the precise checks on every string.
import test from 'ava'
import fc from 'fast-check'
import { parseForm } from '../../api/middleware/legacy-body.js'
import { unstorableText } from '../../shared/ingest/text.js'

/** What parseForm read before it had a plain path: URLSearchParams alone. */
function reference(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of new URLSearchParams(text)) if (k && k !== 'data' && !(k in out)) out[k] = v
  return out
}

const formChar = fc.constantFrom('a', 'b', 'k', 'z', '=', '&', ' ', '.', '_', '-', 'ü', '@', '/', ';', '1', 'data', 'toString', '__proto__')

test('a form without escapes or + reads as URLSearchParams reads it', (t) => {
  fc.assert(
    fc.property(fc.array(formChar, { maxLength: 30 }), (parts) => {
      const text = parts.join('')
      t.deepEqual(parseForm(text), reference(text), text)
    }),
    { numRuns: 2000 },
  )
  for (const text of [
    '',
    '&',
    '&&a=1&&',
    '=v',
    'a',
    'a=',
    'a=1&a=2',
    'ezkey=mk_x&stat=cpu load&count=1',
    'stat=a=b&count=1',
    'data=1&stat=x',
    'toString=1&constructor=2&__proto__=3&ok=4',
    'stat=Zugriffe über Web&value=92.194000&',
  ])
    t.deepEqual(parseForm(text), reference(text), text)
})

test('forms with escapes and + still go through URLSearchParams', (t) => {
  for (const text of ['stat=a+b&count=1', 'stat=%65zkey&x=%zz', 'a%3Db=c', 'stat=caf%C3%A9+au+lait'])
    t.deepEqual(parseForm(text), reference(text), text)
})

test("the text check's quick test refuses exactly what the precise checks refuse", (t) => {
  const precise = (s: string) => s.includes('\u0000') || /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom('a', ' ', 'é', '\u0000', '\uD83D', '\uDE00', '😀', '\u0001', '\uFFFD'), { maxLength: 8 }),
      (chars) => {
        const s = chars.join('')
        t.is(unstorableText(s) !== undefined, precise(s), JSON.stringify(s))
      },
    ),
    { numRuns: 2000 },
  )
})
