import test from 'ava'
import { KeyResolver } from '../../shared/auth/key-resolver.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually } from '../helpers/receivers.js'

const app = appSuite()

test('a new account has no key; creating one returns the secret once and lists it without the secret', async (t) => {
  const user = await signUp(app.url)
  const empty = await request(app.url, '/api/v1/auth/api-keys', { session: user.session })
  t.deepEqual(empty.body, { api_keys: [] })
  const created = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'production' }, session: user.session })
  t.is(created.status, 201)
  t.regex(created.body.key, /^[A-Za-z0-9_]+$/, 'letters, digits and _ only')
  t.true(created.body.key.length >= 40)
  t.is(created.body.api_key.label, 'production')
  t.is(created.body.api_key.last_used_at, null)
  t.true(created.body.key.startsWith(created.body.api_key.prefix))
  const list = await request(app.url, '/api/v1/auth/api-keys', { session: user.session })
  t.is(list.body.api_keys.length, 1)
  t.deepEqual(Object.keys(list.body.api_keys[0]).sort(), ['created_at', 'created_by', 'id', 'label', 'last_used_at', 'prefix', 'scope'])
  t.is(list.body.api_keys[0].scope, 'full', 'a key made without a scope is full')
  t.is(list.body.api_keys[0].created_by.email, user.email)
  t.false(list.text.includes(created.body.key))
  const [row] = await app.sql`select secret_hash from api_keys where id = ${created.body.api_key.id}`
  t.false(row.secret_hash.toString('utf8').includes(created.body.key), 'stored hashed')
})

test('several labelled keys per account, each valid as a Bearer token', async (t) => {
  const user = await signUp(app.url)
  const a = await createKey(app.url, user, 'old')
  const b = await createKey(app.url, user, 'new')
  t.not(a.key, b.key)
  for (const k of [a, b]) t.is((await request(app.url, '/api/v1/auth/me', { bearer: k.key })).status, 200)
})

test('label: empty or longer than 100 characters is 400 and stores nothing', async (t) => {
  const user = await signUp(app.url)
  const long = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'x'.repeat(101) }, session: user.session })
  t.is(long.status, 400)
  t.is(long.body.detail, 'body.label: must be at most 100 characters')
  const empty = await request(app.url, '/api/v1/auth/api-keys', { json: { label: '  ' }, session: user.session })
  t.is(empty.status, 400)
  const missing = await request(app.url, '/api/v1/auth/api-keys', { json: {}, session: user.session })
  t.is(missing.status, 400)
  const ok = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'x'.repeat(100) }, session: user.session })
  t.is(ok.status, 201)
  const [row] = await app.sql`select count(*)::int as n from api_keys where account_id = ${user.accountId}`
  t.is(row.n, 1)
})

test('creating a key needs the CSRF header', async (t) => {
  const user = await signUp(app.url)
  const res = await request(app.url, '/api/v1/auth/api-keys', { json: { label: 'x' }, session: { cookie: user.session.cookie } })
  t.is(res.status, 403)
  const [row] = await app.sql`select count(*)::int as n from api_keys where account_id = ${user.accountId}`
  t.is(row.n, 0)
})

test('a revoked key stops working at once in the revoking process', async (t) => {
  const user = await signUp(app.url)
  const { id, key } = await createKey(app.url, user)
  t.is((await request(app.url, '/api/v1/auth/me', { bearer: key })).status, 200) // now cached
  const del = await request(app.url, `/api/v1/auth/api-keys/${id}`, { method: 'DELETE', session: user.session })
  t.is(del.status, 204)
  t.is((await request(app.url, '/api/v1/auth/me', { bearer: key })).status, 401)
  const list = await request(app.url, '/api/v1/auth/api-keys', { session: user.session })
  t.deepEqual(list.body.api_keys, [])
})

test('a key revoked through one API process is refused by another that had it cached', async (t) => {
  // How soon is a figure for bench/key-revocation-bench.ts; the bound itself is the clocked test below.
  const other = await app.another()
  const user = await signUp(app.url)
  const { id, key } = await createKey(app.url, user)
  t.is((await request(other.url, '/api/v1/auth/me', { bearer: key })).status, 200) // cached in the other process
  t.is((await request(app.url, `/api/v1/auth/api-keys/${id}`, { method: 'DELETE', session: user.session })).status, 204)
  const refused = await eventually(
    async () => {
      const res = await request(other.url, '/api/v1/auth/me', { bearer: key })
      return res.status === 200 ? null : res
    },
    'the other process to refuse the revoked key',
    15_000,
    50,
  )
  t.is(refused.status, 401)
})

test("a cached key is read again once its entry is a second old: a revocation or a plan change behind the process's back is seen then", async (t) => {
  // The resolver on this file's database with a clock the test moves; its background refresh may only see a change sooner.
  let now = Date.now()
  const keys = new KeyResolver(app.sql, () => now)
  t.teardown(() => keys.close())
  const user = await signUp(app.url)
  const { id, key } = await createKey(app.url, user)
  t.is((await keys.resolve(key))?.account.plan, 'free')

  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  now += 1000
  t.is((await keys.resolve(key))?.account.plan, 'business')

  await app.sql`update api_keys set revoked_at = now() where id = ${id}`
  now += 1000
  t.is(await keys.resolve(key), null)
})

test("a key in steady use is refreshed in the background: it stays valid past an entry's age, and a change behind every process's back is seen", async (t) => {
  const user = await signUp(app.url)
  const { id, key } = await createKey(app.url, user)
  const me = async () => request(app.url, '/api/v1/auth/me', { bearer: key })
  // In use for longer than an entry may be served (1 s): it stays valid meanwhile, refreshed rather than dropped.
  for (const until = Date.now() + 1500; Date.now() < until; ) {
    t.is((await me()).status, 200)
    await new Promise((r) => setTimeout(r, 50))
  }
  const until = (what: string, done: (r: Awaited<ReturnType<typeof me>>) => boolean) =>
    eventually(
      async () => {
        const r = await me()
        return done(r) ? r : null
      },
      what,
      15_000,
      50,
    )
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  t.is((await until('the new plan', (r) => r.body.account?.plan === 'business')).status, 200)
  await app.sql`update api_keys set revoked_at = now() where id = ${id}`
  t.is((await until('the refusal', (r) => r.status !== 200)).status, 401)
})

test("revoking another account's key is 404 and leaves it working", async (t) => {
  const owner = await signUp(app.url)
  const intruder = await signUp(app.url)
  const { id, key } = await createKey(app.url, owner)
  const res = await request(app.url, `/api/v1/auth/api-keys/${id}`, { method: 'DELETE', session: intruder.session })
  t.is(res.status, 404)
  t.is((await request(app.url, '/api/v1/auth/me', { bearer: key })).status, 200)
  const list = await request(app.url, '/api/v1/auth/api-keys', { session: intruder.session })
  t.deepEqual(list.body.api_keys, [])
})

test('revoking with a malformed id is 400, an unknown one 404', async (t) => {
  const user = await signUp(app.url)
  t.is((await request(app.url, '/api/v1/auth/api-keys/not-a-uuid', { method: 'DELETE', session: user.session })).status, 400)
  t.is(
    (await request(app.url, '/api/v1/auth/api-keys/00000000-0000-4000-8000-000000000000', { method: 'DELETE', session: user.session }))
      .status,
    404,
  )
})

test('using a key records last_used_at', async (t) => {
  const user = await signUp(app.url)
  const { id, key } = await createKey(app.url, user)
  await request(app.url, '/api/v1/auth/me', { bearer: key })
  let used = null
  for (let i = 0; i < 20 && !used; i++) {
    ;[{ last_used_at: used }] = await app.sql`select last_used_at from api_keys where id = ${id}`
    if (!used) await new Promise((r) => setTimeout(r, 50))
  }
  t.truthy(used)
})
