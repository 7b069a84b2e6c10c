// An import file whose stat names (or other quoted cells) hold U+0000 or an unpaired
// surrogate. On every path (JSON, multipart, long and wide CSV, preview and import) the bad row is counted
// invalid with a printable message, the good rows are imported, and no PostgreSQL text reaches the client.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import type { Reply } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const now = () => Math.floor(Date.now() / 1000)

async function account() {
  const user = await signUp(app.url)
  return { user, key: (await createKey(app.url, user)).key }
}

async function send(key: string, query: string, body: FormData | string, contentType?: string): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}) }
  const res = await fetch(`${app.url}/api/v1/import/legacy${query}`, { method: 'POST', headers, body })
  const text = await res.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text }
}

async function finished(key: string, id: string): Promise<any> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const res = await fetch(`${app.url}/api/v1/import/legacy/${id}`, { headers: { authorization: `Bearer ${key}` } })
    const body = (await res.json()) as any
    if (['completed', 'failed'].includes(body.import?.status) || Date.now() > deadline) return body.import
    await new Promise((r) => setTimeout(r, 50))
  }
}

const storedNames = async (accountId: string) =>
  (
    await app.sql<{ name: string; n: number }[]>`
  select s.name, (select count(*)::int from stat_points(s.id, '-infinity', 'infinity')) as n from stats s where s.account_id = ${accountId} order by s.name`
  ).map((r) => [r.name, r.n])

// No PostgreSQL wording, and nothing the terminal or the database would choke on.
const POSTGRES_TEXT = /unsupported Unicode|invalid input syntax|escape sequence|could not start the import|\\u0000 cannot be converted/i
const clean = (t: any, reply: Reply) => {
  t.notRegex(reply.text, POSTGRES_TEXT)
  t.false(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(reply.text), 'no raw control characters in the answer')
}

const t0 = () => now() - 3600
const jsonFile = () =>
  JSON.stringify(
    [
      {
        name: 'good',
        points: [
          { time: t0(), value: 1 },
          { time: t0() + 60, value: 2 },
        ],
      },
      { name: 'nul\u0000name', points: [{ time: t0(), value: 5 }] },
      {
        name: 'lone\ud800name',
        points: [
          { time: t0(), value: 6 },
          { time: t0() + 1, value: 7 },
        ],
      },
    ],
    null,
    1,
  )
const longCsv = () =>
  `stat,value,timestamp\ngood,1,${t0()}\nnul\u0000name,5,${t0()}\ngood,2,${t0() + 60}\nbad,3,2026-01-01\u0000T00:00:00Z\n`
const wideCsv = () => `Time,good,nul\u0000name\n${t0()},1,5\n${t0() + 60},2,\n`

const paths: Array<[string, () => FormData | string, string | undefined, number]> = [
  ['JSON body', jsonFile, 'application/json', 3],
  [
    'multipart JSON file',
    () => {
      const f = new FormData()
      f.set('file', new Blob([jsonFile()], { type: 'application/json' }), 'export.json')
      return f
    },
    undefined,
    3,
  ],
  ['long CSV', longCsv, 'text/csv', 2],
  ['wide CSV', wideCsv, 'text/csv', 1],
]

for (const [label, body, type, invalid] of paths) {
  test(`${label} holding U+0000 / an unpaired surrogate: preview and import count the bad rows invalid, import the good ones, no database text`, async (t) => {
    const { user, key } = await account()
    const preview = await send(key, '?dryRun=1', body(), type)
    t.is(preview.status, 200, preview.text)
    clean(t, preview)
    t.is(preview.body.points_invalid, invalid)
    t.is(preview.body.points_accepted, 2)
    t.true(
      preview.body.errors.every((e: any) => /invalid (stat name|timestamp)/.test(e.message)),
      JSON.stringify(preview.body.errors),
    )
    t.deepEqual(await storedNames(user.accountId), [], 'the preview stores nothing')

    const real = await send(key, '', body(), type)
    t.is(real.status, 202, real.text)
    clean(t, real)
    t.is(real.body.import.points_invalid, invalid)
    t.is(real.body.import.points_accepted, 2)
    t.deepEqual(real.body.import.errors, preview.body.errors, 'the import reports what the preview did')
    const done = await finished(key, real.body.import.id)
    t.is(done.status, 'completed')
    await settle(app)
    t.deepEqual(await storedNames(user.accountId), [['good', 2]], 'only the good stat, with its two points')
    // The stored line errors quote the bad text in printable form.
    if (label !== 'long CSV') t.regex(JSON.stringify(done.errors), /nul\\\\u0000name/)
    else
      t.deepEqual(
        done.errors.map((e: any) => [e.line, e.message]),
        [
          [3, 'invalid stat name: contains invalid characters'],
          [
            5,
            'invalid timestamp: "2026-01-01\\u0000T00:00:00Z" is neither Unix seconds nor an ISO 8601 time (1700000000 or 2023-11-14T22:13:20Z)',
          ],
        ],
      )
  })
}
