// Text PostgreSQL cannot hold (NUL, unpaired
// surrogates) is refused where it enters, 400 with the field named, and
// nothing is stored, on every route that takes text.
import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settledState } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const now = () => Math.floor(Date.now() / 1000)
const NUL = /contains a NUL character \(\\u0000\), which cannot be stored/

async function keyed() {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  return { user, key }
}

test('v1 writes: a NUL or an unpaired surrogate in ikey is a 400 naming the field; nothing stored, no allowance used', async (t) => {
  const { user, key } = await keyed()
  const cases: Array<[string, unknown, RegExp]> = [
    ['/api/v1/stats/attacker/count', { count: 1, t: now() - 100, ikey: '\u0000' }, /^body\.ikey: contains a NUL/],
    ['/api/v1/stats/attacker/value', { value: 1, t: now() - 100, ikey: 'a\ud800' }, /^body\.ikey: contains an unpaired UTF-16 surrogate/],
    [
      '/api/v1/points',
      {
        points: [
          { stat: 'a', count: 1 },
          { stat: 'b', count: 1, t: now(), ikey: 'x\u0000' },
        ],
      },
      /^body\.points\[1\]\.ikey: contains a NUL/,
    ],
    ['/api/v1/points', { points: [{ stat: 'a', count: 1, 'k\u0000': 1 }] }, /^body\.points\[0\]: a field name contains a NUL/],
  ]
  for (const [path, json, detail] of cases) {
    const res = await request(app.url, path, { json, bearer: key })
    t.is(res.status, 400, path)
    t.is(res.body.code, 'invalid_text')
    t.regex(res.body.detail, detail)
  }
  t.like(await settledState(app, user.accountId), { stats: 0, points: 0, quotaUsed: 0 })
})

test('legacy writes: ikey=%00 on /ez (GET and form), in a JSON batch and on /c is a 400 in the envelope; nothing stored', async (t) => {
  const { user, key } = await keyed()
  const get = await request(app.url, `/ez?ezkey=${key}&stat=s&count=1&t=${now() - 100}&ikey=%00`)
  t.is(get.status, 400)
  t.deepEqual(get.body.status, 'error')
  t.regex(get.body.msg, /^ikey: contains a NUL/)
  const form = await request(app.url, '/ez', { form: `ezkey=${key}&stat=s&count=1&t=${now() - 100}&ikey=a%00b` })
  t.is(form.status, 400)
  t.regex(form.body.msg, NUL)
  const batch = await request(app.url, '/ez', {
    json: {
      ezkey: key,
      data: [
        { stat: 's', count: 1 },
        { stat: 's', count: 2, t: now(), ikey: '\u0000' },
      ],
    },
  })
  t.is(batch.status, 400)
  t.regex(batch.body.msg, /^data\[1\]\.ikey: contains a NUL/)
  const c = await request(app.url, '/c', { form: `ukey=${key}&key=s%00&count=1` })
  t.is(c.status, 400)
  t.regex(c.body.msg, /^key: contains a NUL/)
  t.like(await settledState(app, user.accountId), { stats: 0, points: 0, quotaUsed: 0 })
})

test('PATCH description, key labels, alert URLs and e-mail: 400 naming the field, nothing changed', async (t) => {
  const { user, key } = await keyed()
  t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })).status, 200)
  await settledState(app, user.accountId)
  const patch = await request(app.url, '/api/v1/stats/s', { method: 'PATCH', json: { description: 'a\u0000b' }, bearer: key })
  t.is(patch.status, 400)
  t.regex(patch.body.detail, /^body\.description: contains a NUL/)
  const [stat] = await app.sql`select description from stats where account_id = ${user.accountId}`
  t.is(stat.description, null)

  const label = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'ci\u0000' }, session: user.session })
  t.is(label.status, 400)
  t.regex(label.body.detail, /^body\.label: contains a NUL/)
  const [{ keys }] = await app.sql`select count(*)::int as keys from api_keys where account_id = ${user.accountId}`
  t.is(keys, 1)

  const alert = { stat_name: 's', condition_type: 'above', threshold: 1 }
  for (const [channel, config, field] of [
    ['webhook', { webhook_url: 'http://127.0.0.1:9/hook\u0000' }, 'webhook_url'],
    ['slack', { slack_webhook_url: 'http://127.0.0.1:9/\u0000' }, 'slack_webhook_url'],
    ['email', { email: 'ops\u0000@example.com' }, 'email'],
  ] as const) {
    const res = await request(app.url, '/api/v1/alerts', { json: { ...alert, channel, channel_config: config }, bearer: key })
    t.is(res.status, 400, channel)
    t.regex(res.body.detail, new RegExp(`^body\\.channel_config\\.${field}: contains a NUL`))
  }
  const [{ alerts }] = await app.sql`select count(*)::int as alerts from alerts where account_id = ${user.accountId}`
  t.is(alerts, 0)
})

test('sign-up and login with a NUL in the e-mail: 400, no account; path and query parameters too', async (t) => {
  const signup = await request(app.url, '/api/v1/auth/signup', {
    json: { email: 'nul\u0000@example.com', password: 'correct horse battery' },
  })
  t.is(signup.status, 400)
  t.regex(signup.body.detail, /^body\.email: contains a NUL/)
  const [{ n }] = await app.sql`select count(*)::int as n from accounts where email like 'nul%'`
  t.is(n, 0)
  const login = await request(app.url, '/api/v1/auth/login', { json: { email: 'a\u0000@example.com', password: 'whatever it is' } })
  t.is(login.status, 400)
  t.regex(login.body.detail, /^body\.email: contains a NUL/)

  const { key } = await keyed()
  const path = await request(app.url, '/api/v1/stats/a%00b', { bearer: key })
  t.is(path.status, 400)
  t.regex(path.body.detail, /^path\.name: contains a NUL/)
  const query = await request(app.url, '/api/v1/export?stat=a%00b', { bearer: key })
  t.is(query.status, 400)
  t.regex(query.body.detail, /^query\.stat: contains a NUL/)
})

test('ordinary Unicode text (accents, emoji as surrogate pairs, CJK) is stored as sent', async (t) => {
  const { user, key } = await keyed()
  t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1, t: now() - 5, ikey: 'ü-😀-漢' }, bearer: key })).status, 200)
  const patch = await request(app.url, '/api/v1/stats/s', { method: 'PATCH', json: { description: 'Zugriffe über Web 😀' }, bearer: key })
  t.is(patch.status, 200)
  t.is(patch.body.stat.description, 'Zugriffe über Web 😀')
  t.like(await settledState(app, user.accountId), { stats: 1, points: 1 })
})

// Control characters (BEL, ANSI escapes, newlines) and bytes that are not UTF-8 (which the
// parsers turn into U+FFFD) in a description, a key label or an ikey.
const rawJson = (path: string, bytes: Buffer, headers: Record<string, string>) =>
  fetch(app.url + path, {
    method: path.includes('/stats/') ? 'PATCH' : 'POST',
    body: new Uint8Array(bytes),
    headers: { 'content-type': 'application/json', ...headers },
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
const notUtf8 = (json: string) =>
  Buffer.concat([Buffer.from(json.split('@@')[0]), Buffer.from([0xff, 0xfe]), Buffer.from(json.split('@@')[1])])

test('item 8: a control character or invalid UTF-8 in a description or a key label is a 400 naming the field; nothing changed', async (t) => {
  const { user, key } = await keyed()
  t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })).status, 200)
  await settledState(app, user.accountId)
  for (const [text, code] of [
    ['ring\u0007', '0007'],
    ['\u001b[31mred\u001b[0m', '001B'],
    ['two\nlines', '000A'],
    ['c1\u009b', '009B'],
  ]) {
    const patch = await request(app.url, '/api/v1/stats/s', { method: 'PATCH', json: { description: text }, bearer: key })
    t.is(patch.status, 400, JSON.stringify(text))
    t.is(patch.body.code, 'invalid_text')
    t.is(
      patch.body.detail,
      `body.description: contains a control character (U+${code}), which this field cannot hold; send printable text on one line`,
    )
    const label = await request(app.url, '/api/v1/auth/api-keys', { json: { label: `ci ${text} x` }, session: user.session })
    t.is(label.status, 400, JSON.stringify(text))
    t.regex(label.body.detail, new RegExp(`^body\\.label: contains a control character \\(U\\+${code}\\)`))
  }
  const patch = await rawJson('/api/v1/stats/s', notUtf8('{"description":"caf@@e"}'), { authorization: `Bearer ${key}` })
  t.is(patch.status, 400)
  t.is(
    patch.body.detail,
    'body.description: contains U+FFFD, the replacement character: the bytes sent were not valid UTF-8; send the text encoded as UTF-8',
  )
  const label = await rawJson('/api/v1/auth/api-keys', notUtf8('{"label":"ci@@"}'), {
    cookie: user.session.cookie,
    'x-service-csrf': user.session.csrf,
  })
  t.is(label.status, 400)
  t.regex(label.body.detail, /^body\.label: contains U\+FFFD/)
  const [stat] = await app.sql`select description from stats where account_id = ${user.accountId}`
  t.is(stat.description, null)
  const [{ keys }] = await app.sql`select count(*)::int as keys from api_keys where account_id = ${user.accountId}`
  t.is(keys, 1, 'only the key made by the test setup')
  // Printable text still goes through, accents and all.
  const ok = await request(app.url, '/api/v1/stats/s', { method: 'PATCH', json: { description: 'Zugriffe über Web — 東京' }, bearer: key })
  t.is(ok.status, 200)
})

test('item 8: a control character or invalid UTF-8 in an ikey is a 400 naming it on v1 and legacy writes; nothing stored', async (t) => {
  const { user, key } = await keyed()
  const v1 = await request(app.url, '/api/v1/stats/s/count', { json: { count: 1, t: now() - 100, ikey: 'retry\u001b[2J' }, bearer: key })
  t.is(v1.status, 400)
  t.is(v1.body.code, 'invalid_ikey')
  t.regex(v1.body.detail, /invalid ikey: contains a control character \(U\+001B\)/)
  const raw = await rawJson('/api/v1/points', notUtf8(`{"points":[{"stat":"s","count":1,"t":${now() - 100},"ikey":"k@@"}]}`), {
    authorization: `Bearer ${key}`,
  })
  t.is(raw.status, 400)
  t.regex(raw.body.detail, /ikey: contains U\+FFFD/)
  for (const ikey of ['%07', 'a%1Bb', '%FF', 'x%C3']) {
    const ez = await request(app.url, `/ez?ezkey=${key}&stat=s&count=1&t=${now() - 100}&ikey=${ikey}`)
    t.is(ez.status, 400, ikey)
    t.regex(ez.body.msg, /invalid ikey: contains (a control character|U\+FFFD)/, ikey)
  }
  t.like(await settledState(app, user.accountId), { stats: 0, points: 0, quotaUsed: 0 })
})

// Invisible characters (bidi overrides, zero-width, BOM, soft hyphen, line separator, private
// use, tag characters) fall under the same one rule as control characters, in every text field a person reads.
const INVISIBLES: Array<[string, string]> = [
  ['\u202E', '202E'],
  ['\u200B', '200B'],
  ['\u2028', '2028'],
  ['\uFEFF', 'FEFF'],
  ['\u00AD', '00AD'],
  ['\uE000', 'E000'],
  ['\u{E0041}', 'E0041'],
  ['\u2066', '2066'],
  ['\u3164', '3164'],
]
const invisibleDetail = (field: string, code: string) =>
  `${field}: contains an invisible character (U+${code}), which this field cannot hold; send visible text only`

test('an invisible character in a description, unit, key label or dashboard name or card title is a 400 naming the field; nothing stored', async (t) => {
  const { user, key } = await keyed()
  t.is((await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })).status, 200)
  await settledState(app, user.accountId)
  for (const [ch, code] of INVISIBLES) {
    const text = `ab${ch}cd`
    for (const field of ['description', 'unit'] as const) {
      const res = await request(app.url, '/api/v1/stats/s', { method: 'PATCH', json: { [field]: text }, bearer: key })
      t.is(res.status, 400, `${field} ${code}`)
      t.is(res.body.code, 'invalid_text')
      t.is(res.body.detail, invisibleDetail(`body.${field}`, code))
    }
    const label = await request(app.url, '/api/v1/auth/api-keys', { json: { label: text }, session: user.session })
    t.is(label.status, 400, `label ${code}`)
    t.is(label.body.detail, invisibleDetail('body.label', code))
    const named = await request(app.url, '/api/v1/dashboards', { bearer: key, json: { name: text, cards: [{ stats: ['s'] }] } })
    t.is(named.status, 400, `dashboard name ${code}`)
    t.is(named.body.detail, invisibleDetail('body.name', code))
    const titled = await request(app.url, '/api/v1/dashboards', {
      bearer: key,
      json: { name: 'Shop', cards: [{ stats: ['s'], title: text }] },
    })
    t.is(titled.status, 400, `card title ${code}`)
    t.is(titled.body.detail, invisibleDetail('body.cards.0.title', code))
  }
  const [stat] = await app.sql`select description, unit from stats where account_id = ${user.accountId}`
  t.like(stat, { description: null, unit: null })
  t.is(
    (await app.sql`select count(*)::int as n from api_keys where account_id = ${user.accountId}`)[0].n,
    1,
    'only the key made by the test setup',
  )
  t.is((await app.sql`select count(*)::int as n from dashboards where account_id = ${user.accountId}`)[0].n, 0)
  // A joiner inside an emoji sequence or a Persian word is part of the spelling, not hidden text.
  const ok = await request(app.url, '/api/v1/stats/s', {
    method: 'PATCH',
    json: { description: 'On call 👩‍💻 — می‌خواهم — ❤️ café', unit: 'm²' },
    bearer: key,
  })
  t.is(ok.status, 200, ok.text)
  t.is(
    (await app.sql`select description from stats where account_id = ${user.accountId}`)[0].description,
    'On call 👩‍💻 — می‌خواهم — ❤️ café',
  )
})

test('an invisible character in an ikey is a 400 naming it on v1 and legacy writes; nothing stored', async (t) => {
  const { user, key } = await keyed()
  for (const [ch, code] of INVISIBLES) {
    const v1 = await request(app.url, '/api/v1/stats/s/count', { json: { count: 1, t: now() - 100, ikey: `retry${ch}1` }, bearer: key })
    t.is(v1.status, 400, code)
    t.is(v1.body.code, 'invalid_ikey')
    t.regex(v1.body.detail, new RegExp(`invalid ikey: contains an invisible character \\(U\\+${code}\\)`))
    const ez = await request(app.url, `/ez?ezkey=${key}&stat=s&count=1&t=${now() - 100}&ikey=${encodeURIComponent(`retry${ch}1`)}`)
    t.is(ez.status, 400, code)
    t.regex(ez.body.msg, new RegExp(`invalid ikey: contains an invisible character \\(U\\+${code}\\)`))
  }
  t.like(await settledState(app, user.accountId), { stats: 0, points: 0, quotaUsed: 0 })
})
