import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function sharedStat(name = 'signups') {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const now = Math.floor(Date.now() / 1000)
  for (const [count, t] of [
    [2, now - 120],
    [3, now - 60],
    [4, now],
  ])
    await request(app.url, `/api/v1/stats/${name}/count`, { json: { count, t }, bearer: key })
  await settle(app)
  const share = await request(app.url, `/api/v1/stats/${name}/share`, { method: 'POST', bearer: key })
  return { user, key, share }
}

test('4.3 share: POST creates a token with the stat id and embed URL; the JSON embed works without any session', async (t) => {
  const { share } = await sharedStat()
  t.is(share.status, 201)
  const { token, stat_id, embed_url } = share.body.share
  t.regex(token, /^[A-Za-z0-9_-]{32,}$/)
  t.true(embed_url.endsWith(`/embed/${stat_id}?token=${token}`))
  const res = await request(app.url, `/api/v1/embed/${stat_id}?token=${token}&range=1h`)
  t.is(res.status, 200)
  t.is(res.body.stat.name, 'signups')
  t.is(res.body.range.bucket_seconds, 60)
  t.is(
    res.body.points.reduce((s: number, p: { value: number }) => s + p.value, 0),
    9,
  )
  t.deepEqual(Object.keys(res.body.stat).sort(), ['description', 'id', 'kind', 'name'])
})

test('4.6 embed: the token is stored hashed', async (t) => {
  const { share } = await sharedStat()
  const [row] = await app.sql`select encode(token_hash, 'escape') as h from stat_shares where stat_id = ${share.body.share.stat_id}`
  t.false(row.h.includes(share.body.share.token))
})

test('4.6 embed: statId must be a UUID (400); unknown stat, missing, wrong token: the same 404', async (t) => {
  const { share } = await sharedStat()
  const { stat_id, token } = share.body.share
  const notUuid = await request(app.url, `/api/v1/embed/123?token=${token}`)
  t.is(notUuid.status, 400)
  t.is(notUuid.body.detail, 'statId must be a UUID')
  const answers = await Promise.all([
    request(app.url, `/api/v1/embed/00000000-0000-4000-8000-000000000000?token=${token}`),
    request(app.url, `/api/v1/embed/${stat_id}`),
    // One character changed (a token ending in x would otherwise stay the same: 1 run in 64 failed).
    request(app.url, `/api/v1/embed/${stat_id}?token=${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`),
  ])
  for (const a of answers) {
    t.is(a.status, 404)
    t.is(a.body.detail, answers[0].body.detail)
  }
})

test('4.6 embed: range is limited to 1h, 6h, 24h, 7d, 30d', async (t) => {
  const { share } = await sharedStat()
  const { stat_id, token } = share.body.share
  for (const range of ['1h', '6h', '24h', '7d', '30d'])
    t.is((await request(app.url, `/api/v1/embed/${stat_id}?token=${token}&range=${range}`)).status, 200, range)
  const bad = await request(app.url, `/api/v1/embed/${stat_id}?token=${token}&range=90d`)
  t.is(bad.status, 400)
  t.is(bad.body.detail, 'invalid range: must be one of 1h, 6h, 24h, 7d, 30d')
})

test('4.3 share: posting again rotates the token (the old one stops working); DELETE revokes at once', async (t) => {
  const { key, share } = await sharedStat()
  const first = share.body.share
  const second = (await request(app.url, '/api/v1/stats/signups/share', { method: 'POST', bearer: key })).body.share
  t.not(second.token, first.token)
  t.is((await request(app.url, `/api/v1/embed/${first.stat_id}?token=${first.token}`)).status, 404)
  t.is((await request(app.url, `/api/v1/embed/${second.stat_id}?token=${second.token}`)).status, 200)
  t.is((await request(app.url, '/api/v1/stats/signups/share', { method: 'DELETE', bearer: key })).status, 204)
  t.is((await request(app.url, `/api/v1/embed/${second.stat_id}?token=${second.token}`)).status, 404)
  t.is((await request(app.url, '/api/v1/stats/signups/share', { method: 'DELETE', bearer: key })).status, 404)
})

test('embed page: an HTML chart for an iframe, no session needed, CSP allows framing and forbids scripts', async (t) => {
  const ok = await sharedStat('weekly.signups')
  const { stat_id, token } = ok.share.body.share
  const page = await request(app.url, `/embed/${stat_id}?token=${token}&range=24h`)
  t.is(page.status, 200)
  t.regex(page.headers.get('content-type') ?? '', /text\/html/)
  const csp = page.headers.get('content-security-policy') ?? ''
  t.regex(csp, /frame-ancestors \*/)
  t.regex(csp, /default-src 'none'/)
  t.falsy(page.headers.get('x-frame-options'))
  t.regex(page.text, /<svg[^>]+viewBox/)
  t.regex(page.text, /<polyline/)
  t.regex(page.text, /weekly\.signups/)
  t.notRegex(page.text, /<script/)
  t.is((await request(app.url, `/embed/${stat_id}?token=wrong`)).status, 404)
})

test('embed page of a new stat: a lone bucket is drawn as a dot, and a gauge shows its min-max spread', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const minute = Math.floor(Date.now() / 60_000) * 60
  for (const value of [10, 30])
    t.is((await request(app.url, '/api/v1/stats/queue.depth/value', { json: { value, t: minute }, bearer: key })).status, 200)
  await settle(app)
  const { stat_id, token } = (await request(app.url, '/api/v1/stats/queue.depth/share', { method: 'POST', bearer: key })).body.share
  const data = await request(app.url, `/api/v1/embed/${stat_id}?token=${token}&range=1h`)
  t.is(data.body.points.length, 1, 'one bucket')
  const page = (await request(app.url, `/embed/${stat_id}?token=${token}&range=1h`)).text
  const dots = [...page.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)]
  t.is(dots.length, 1, 'the lone bucket is visible')
  // The spread bar runs from the max (30) above the mean (20) to the min (10) below it, at the dot's x.
  const band = /<line class="band" x1="([\d.]+)" y1="([\d.]+)" x2="[\d.]+" y2="([\d.]+)"/.exec(page)
  t.truthy(band, 'a min-max band')
  t.is(band![1], dots[0][1])
  const [yMax, yMean, yMin] = [Number(band![2]), Number(dots[0][2]), Number(band![3])]
  t.true(yMax < yMean && yMean < yMin, `max ${yMax} above mean ${yMean} above min ${yMin} (SVG y grows downwards)`)
  t.true(Math.abs((yMax + yMin) / 2 - yMean) < 0.2, 'the mean sits halfway between 10 and 30')
})
