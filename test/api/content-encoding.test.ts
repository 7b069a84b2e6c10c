// The routes that read their own body (legacy /ez, /c, /v and the import upload) honour
// Content-Encoding as the v1 routes do: gzip, deflate and br are decoded; a body not compressed the way its
// header says is a 400; another encoding is a 415; in every refusal nothing is stored. Limits count
// decoded bytes.
import test from 'ava'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { settledState } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function account() {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

const ENCODE: Record<string, (b: string) => Buffer> = {
  gzip: (b) => gzipSync(b),
  deflate: (b) => deflateSync(b),
  br: (b) => brotliCompressSync(Buffer.from(b)),
}

async function post(path: string, body: string | Buffer, headers: Record<string, string>) {
  const res = await fetch(app.url + path, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers })
  const text = await res.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, body: parsed, text }
}

const pointsOf = async (accountId: string) =>
  (
    await app.sql<{ name: string; n: number; sum: number }[]>`
  select s.name, count(p.*)::int as n, coalesce(sum(p.value), 0)::float8 as sum from stats s left join points p on p.stat_id = s.id
  where s.account_id = ${accountId} group by s.name order by s.name`
  ).map((r) => [r.name, r.n, r.sum])

const FORM = 'application/x-www-form-urlencoded'

test('legacy routes decode gzip, deflate and br bodies (forms and the /ez JSON batch) and store them', async (t) => {
  const { user, key } = await account()
  for (const [encoding, encode] of Object.entries(ENCODE)) {
    const ez = await post('/ez', encode(`ezkey=${key}&stat=ez.${encoding}&count=2`), { 'content-type': FORM, 'content-encoding': encoding })
    t.is(ez.status, 200, `${encoding} /ez: ${ez.text}`)
    t.is(ez.body.status, 200)
    const c = await post('/c', encode(`ukey=${key}&key=c.${encoding}&count=3`), { 'content-type': FORM, 'content-encoding': encoding })
    t.is(c.body.status, 200, `${encoding} /c: ${c.text}`)
    const v = await post('/v', encode(`ukey=${key}&key=v.${encoding}&value=4`), { 'content-type': FORM, 'content-encoding': encoding })
    t.is(v.body.status, 200, `${encoding} /v: ${v.text}`)
  }
  const batch = await post(
    '/ez',
    gzipSync(
      JSON.stringify({
        ezkey: key,
        data: [
          { stat: 'batch', count: 1 },
          { stat: 'batch', count: 5 },
        ],
      }),
    ),
    { 'content-type': 'application/json', 'content-encoding': 'GZIP' },
  )
  t.is(batch.status, 200, batch.text)
  t.is(batch.body.accepted, 2)
  await settledState(app, user.accountId)
  t.deepEqual(await pointsOf(user.accountId), [
    ['batch', 2, 6],
    ['c.br', 1, 3],
    ['c.deflate', 1, 3],
    ['c.gzip', 1, 3],
    ['ez.br', 1, 2],
    ['ez.deflate', 1, 2],
    ['ez.gzip', 1, 2],
    ['v.br', 1, 4],
    ['v.deflate', 1, 4],
    ['v.gzip', 1, 4],
  ])
})

test('legacy routes: a plain body labelled gzip/deflate/br is 400, an unknown encoding 415 (strict or not), a body that decodes past the limit 413; nothing stored', async (t) => {
  const { user, key } = await account()
  for (const [path, form] of [
    ['/ez', `ezkey=${key}&stat=x&count=1`],
    ['/c', `ukey=${key}&key=x&count=1`],
    ['/v', `ukey=${key}&key=x&value=1`],
  ]) {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await post(path, form, { 'content-type': FORM, 'content-encoding': encoding })
      t.is(res.status, 400, `${path} ${encoding}: ${res.text}`)
      t.is(res.body.status, 'error')
      t.regex(res.body.msg, /^request body could not be decompressed as its Content-Encoding says/)
    }
    for (const strict of [{}, { 'x-service-strict': '1' }] as Array<Record<string, string>>) {
      const res = await post(path, form, { 'content-type': FORM, 'content-encoding': 'compress', ...strict })
      t.is(res.status, 415, `${path} compress: ${res.text}`)
      t.is(res.body.status, 'error')
      t.is(res.body.msg, 'unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br')
    }
    const json = await post(path, JSON.stringify({ ezkey: key, ukey: key, stat: 'x', key: 'x', count: 1 }), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    })
    t.is(json.status, 400, `${path} plain JSON labelled gzip`)
  }
  // 600 KB of form that gzips to a few hundred bytes: over the 256 KB body limit once decoded.
  const bomb = await post('/ez', gzipSync(`ezkey=${key}&stat=x&count=1&pad=${'a'.repeat(600_000)}`), {
    'content-type': FORM,
    'content-encoding': 'gzip',
  })
  t.is(bomb.status, 413, bomb.text)
  const after = await settledState(app, user.accountId)
  t.is(after.stats, 0)
  t.is(after.points, 0)
  t.is(after.quotaUsed, 0)
})

test('import: a gzip CSV is decoded and imported; a plain file labelled gzip is 400, an unknown encoding 415; nothing stored', async (t) => {
  const { user, key } = await account()
  const now = Math.floor(Date.now() / 1000)
  const csv = `stat,value,timestamp\nimported,1,${now - 120}\nimported,2,${now - 60}\n`
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }
  const wrong = await post('/api/v1/import/legacy', csv, { ...headers, 'content-encoding': 'gzip' })
  t.is(wrong.status, 400, wrong.text)
  t.is(wrong.body.code, 'malformed_body')
  t.regex(wrong.body.detail, /^request body could not be decompressed as its Content-Encoding says/)
  const unknown = await post('/api/v1/import/legacy', csv, { ...headers, 'content-encoding': 'zstd' })
  t.is(unknown.status, 415, unknown.text)
  t.is(unknown.body.code, 'unsupported_content_encoding')
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from imports where account_id = ${user.accountId}`
  t.is(n, 0, 'no import recorded')
  t.deepEqual(await pointsOf(user.accountId), [])

  const preview = await post('/api/v1/import/legacy?dryRun=1', deflateSync(csv), { ...headers, 'content-encoding': 'deflate' })
  t.is(preview.status, 200, preview.text)
  t.is(preview.body.points_accepted, 2)
  const real = await post('/api/v1/import/legacy', gzipSync(csv), { ...headers, 'content-encoding': 'gzip' })
  t.is(real.status, 202, real.text)
  for (let i = 0; i < 400; i++) {
    const [row] = await app.sql<{ status: string }[]>`select status from imports where id = ${real.body.import.id}`
    if (row.status === 'completed') break
    await new Promise((r) => setTimeout(r, 50))
  }
  t.deepEqual(await pointsOf(user.accountId), [['imported', 2, 3]])
})

test('the OpenAPI document lists 415 on the legacy routes and the import', async (t) => {
  const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as any
  for (const [path, method] of [
    ['/ez', 'post'],
    ['/c', 'post'],
    ['/v', 'post'],
    ['/api/v1/import/legacy', 'post'],
  ]) {
    t.truthy(doc.paths[path][method].responses['415'], `${method} ${path}`)
  }
})
