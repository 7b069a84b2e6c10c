import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle, stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function userWithStat(name = 'page views', kind: 'count' | 'value' = 'count') {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, `/api/v1/stats/${encodeURIComponent(name)}/${kind}`, { json: { [kind]: 3 }, bearer: key })
  if (res.status !== 200) throw new Error(res.text)
  await settle(app)
  return { user, key }
}

test('4.3 PATCH sets a description up to 500 characters and null clears it', async (t) => {
  const { key } = await userWithStat()
  const set = await request(app.url, '/api/v1/stats/page%20views', { method: 'PATCH', json: { description: 'd'.repeat(500) }, bearer: key })
  t.is(set.status, 200)
  t.is(set.body.stat.description, 'd'.repeat(500))
  t.is(set.body.stat.name, 'page views')
  const cleared = await request(app.url, '/api/v1/stats/page%20views', { method: 'PATCH', json: { description: null }, bearer: key })
  t.is(cleared.status, 200)
  t.is(cleared.body.stat.description, null)
})

test('4.3 PATCH: 501 characters, a missing field or an unknown stat are refused and change nothing', async (t) => {
  const { user, key } = await userWithStat()
  await request(app.url, '/api/v1/stats/page%20views', { method: 'PATCH', json: { description: 'kept' }, bearer: key })
  const long = await request(app.url, '/api/v1/stats/page%20views', {
    method: 'PATCH',
    json: { description: 'd'.repeat(501) },
    bearer: key,
  })
  t.is(long.status, 400)
  t.is(long.body.detail, 'body.description: must be at most 500 characters')
  const missing = await request(app.url, '/api/v1/stats/page%20views', { method: 'PATCH', json: {}, bearer: key })
  t.is(missing.status, 400)
  const unknown = await request(app.url, '/api/v1/stats/nope', { method: 'PATCH', json: { description: 'x' }, bearer: key })
  t.is(unknown.status, 404)
  const [row] = await app.sql`select description from stats where account_id = ${user.accountId} and name = 'page views'`
  t.is(row.description, 'kept')
})

test('3.1 DELETE removes the stat and all its points; a later write re-creates it as a new stat', async (t) => {
  const { user, key } = await userWithStat()
  const [before] = await app.sql`select id from stats where account_id = ${user.accountId}`
  await request(app.url, '/api/v1/stats/page%20views/share', { method: 'POST', bearer: key })
  const del = await request(app.url, '/api/v1/stats/page%20views', { method: 'DELETE', bearer: key })
  t.is(del.status, 204)
  t.like(await stored(app, user.accountId), { stats: 0, points: 0 })
  const [left] = await app.sql`select (select count(*) from stat_shares where stat_id = ${before.id})::int as shares,
    (select count(*) from rollups_1m where stat_id = ${before.id})::int + (select count(*) from rollup_pending where stat_id = ${before.id})::int as rollups`
  t.deepEqual(left, { shares: 0, rollups: 0 })
  t.is((await request(app.url, '/api/v1/stats/page%20views', { bearer: key })).status, 404)
  // Deleting does not stop writers: the next write creates a new stat, even of the other kind.
  const again = await request(app.url, '/api/v1/stats/page%20views/value', { json: { value: 7 }, bearer: key })
  t.is(again.status, 200)
  await settle(app)
  const [after] = await app.sql`select id, kind from stats where account_id = ${user.accountId}`
  t.not(after.id, before.id)
  t.is(after.kind, 'gauge')
  t.like(await stored(app, user.accountId), { stats: 1, points: 1 })
})

test('3.1 DELETE in one API process: the next write through another process re-creates the stat (no stale cache)', async (t) => {
  const { user, key } = await userWithStat('cached')
  const other = await app.another()
  t.is((await request(other.url, '/ez', { form: `ezkey=${key}&stat=cached&count=1` })).body.status, 200) // cached there
  await settle(app)
  t.is((await request(app.url, '/api/v1/stats/cached', { method: 'DELETE', bearer: key })).status, 204)
  let res: Awaited<ReturnType<typeof request>> | undefined
  for (let i = 0; i < 50; i++) {
    res = await request(other.url, '/ez', { form: `ezkey=${key}&stat=cached&value=2` })
    if (res.status === 200) break
    await new Promise((r) => setTimeout(r, 20))
  }
  t.is(res!.body.status, 200)
  await settle(app)
  const [row] = await app.sql`select kind from stats where account_id = ${user.accountId} and name = 'cached'`
  t.is(row.kind, 'gauge')
  t.like(await stored(app, user.accountId), { stats: 1, points: 1 })
})

test('3.1 points queued before a delete die with the stat', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const ingest = app.api.deps.queues.get('ingest')
  await ingest.pause()
  try {
    t.is((await request(app.url, '/ez', { form: `ezkey=${key}&stat=doomed&count=5` })).body.status, 200)
    t.is((await request(app.url, '/api/v1/stats/doomed', { method: 'DELETE', bearer: key })).status, 204)
  } finally {
    await ingest.resume()
  }
  await settle(app)
  t.like(await stored(app, user.accountId), { stats: 0, points: 0 })
})

test('account isolation: another account cannot describe, delete, share or unshare a stat', async (t) => {
  const { user } = await userWithStat('mine')
  const intruder = await signUp(app.url)
  const { key } = await createKey(app.url, intruder)
  for (const [method, path, json] of [
    ['PATCH', '/api/v1/stats/mine', { description: 'x' }],
    ['DELETE', '/api/v1/stats/mine', undefined],
    ['POST', '/api/v1/stats/mine/share', undefined],
    ['DELETE', '/api/v1/stats/mine/share', undefined],
    ['GET', '/api/v1/stats/mine/export', undefined],
    ['GET', '/api/v1/export?stat=mine', undefined],
  ] as const) {
    const res = await request(app.url, path, { method, json, bearer: key })
    t.is(res.status, 404, `${method} ${path}`)
  }
  const [row] = await app.sql`select description from stats where account_id = ${user.accountId} and name = 'mine'`
  t.is(row.description, null)
})

test('session-authenticated PATCH and DELETE need the CSRF header', async (t) => {
  const { user } = await userWithStat('csrf')
  const patch = await request(app.url, '/api/v1/stats/csrf', {
    method: 'PATCH',
    json: { description: 'x' },
    session: { cookie: user.session.cookie },
  })
  t.is(patch.status, 403)
  const del = await request(app.url, '/api/v1/stats/csrf', { method: 'DELETE', session: { cookie: user.session.cookie } })
  t.is(del.status, 403)
  t.like(await stored(app, user.accountId), { stats: 1 })
  const ok = await request(app.url, '/api/v1/stats/csrf', { method: 'DELETE', session: user.session })
  t.is(ok.status, 204)
})

test('GET share says whether the stat is shared (never the token); GET extent counts its points from the oldest; 404 for a stat that does not exist', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const now = Math.floor(Date.now() / 1000)
  const points = [
    { stat: 'backfilled', value: 1, t: now - 5 * 86_400 },
    { stat: 'backfilled', value: 2, t: now - 60 },
    { stat: 'backfilled', value: 3, t: now },
  ]
  t.is((await request(app.url, '/api/v1/points', { json: { points }, bearer: key })).status, 200)
  await settle(app)
  t.deepEqual((await request(app.url, '/api/v1/stats/backfilled/share', { bearer: key })).body, { share: null })
  const made = await request(app.url, '/api/v1/stats/backfilled/share', { method: 'POST', bearer: key })
  const state = await request(app.url, '/api/v1/stats/backfilled/share', { bearer: key })
  t.deepEqual(state.body, { share: { stat_id: made.body.share.stat_id, created_at: made.body.share.created_at } })
  t.false(state.text.includes(made.body.share.token), 'the token is not read back')
  const extent = await request(app.url, '/api/v1/stats/backfilled/extent', { bearer: key })
  t.is(extent.status, 200)
  t.deepEqual(extent.body, {
    points: 3,
    oldest: new Date((now - 5 * 86_400) * 1000).toISOString(),
    newest: new Date(now * 1000).toISOString(),
  })
  for (const path of ['/api/v1/stats/nothing/extent', '/api/v1/stats/nothing/share']) {
    const res = await request(app.url, path, { bearer: key })
    t.is(res.status, 404, path)
    t.is(res.body.code, 'stat_not_found')
  }
})
