// The direct route of legacy single writes (api/direct-writes.ts, docs/decisions.md §27): a busy writer's form
// writes are answered without Koa, with the answer, headers, log line and storage of the Koa route, and every
// write it cannot decide in memory (a refusal, a t, a new stat) is answered by the Koa route as before.
import { randomUUID } from 'node:crypto'
import test from 'ava'
import { directAnswers } from '../../api/direct-writes.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

async function busyUser() {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

const countOf = async (accountId: string, name: string) =>
  (
    await app.sql<{ n: number; s: number }[]>`
    select count(*)::int as n, coalesce(sum(value), 0)::float8 as s from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p
    where s.account_id = ${accountId} and s.name = ${name}`
  )[0]

/** The headers an answer is judged by: every one but those that differ per request. */
function stableHeaders(r: Reply): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of r.headers) if (!['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset'].includes(k)) out[k] = v
  return out
}

test.serial('a busy writer is answered directly, exactly as the Koa route answers, and every point is stored once', async (t) => {
  const { user, key } = await busyUser()
  const write = (path: string, form: string, headers: Record<string, string> = {}) => request(app.url, path, { form, headers })
  // The first write goes through Koa: its key and stat are not known to this process yet.
  const tag = randomUUID().slice(0, 8)
  const before = directAnswers.count
  const first = await write('/ez', `ezkey=${key}&stat=direct&count=1`, { 'x-request-id': `${tag}-first` })
  t.is(directAnswers.count, before)
  t.deepEqual(first.body, { status: 200, msg: 'ok' })
  const burst: Reply[] = []
  for (let wave = 0; wave < 8; wave++)
    burst.push(
      ...(await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          write(['/ez', '/api/ez'][i % 2], `ezkey=${key}&stat=direct&count=2`, { 'x-request-id': `${tag}-${wave}-${i}` }),
        ),
      )),
    )
  t.true(directAnswers.count - before > 50, `most of the burst was answered directly (${directAnswers.count - before} of 200)`)
  for (const [i, r] of burst.entries()) {
    t.is(r.status, 200)
    t.is(r.text, '{"status":200,"msg":"ok"}')
    t.deepEqual(stableHeaders(r), stableHeaders(first))
    t.is(r.headers.get('x-request-id'), `${tag}-${Math.floor(i / 25)}-${i % 25}`)
    t.regex(r.headers.get('ratelimit-remaining') ?? '', /^\d+$/)
  }
  // The request log has a line for every write, direct or not.
  await settle(app)
  t.deepEqual(await countOf(user.accountId, 'direct'), { n: 201, s: 401 })
  const lines = app.logs.filter((l) => l.includes(`"request_id":"${tag}-`))
  t.is(lines.length, 201)
  t.true(lines.every((l) => /"message":"request"/.test(l) && /"status":200/.test(l) && /"url":"\/(api\/)?ez"/.test(l) && !l.includes(key)))
})

test.serial(
  'what the direct route cannot decide is answered by the Koa route: refusals store nothing, /c and /v keep their kinds',
  async (t) => {
    const { user, key } = await busyUser()
    const write = (path: string, form: string, headers: Record<string, string> = {}) => request(app.url, path, { form, headers })
    t.is((await write('/c', `ukey=${key}&key=hits`)).body.status, 200)
    t.is((await write('/v', `ukey=${key}&key=temp&value=20`)).body.status, 200)
    const burst = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        i % 3 === 0
          ? write('/c', `ukey=${key}&key=hits&count=1`)
          : i % 3 === 1
            ? write('/v', `ukey=${key}&key=temp&value=21`)
            : write('/ez', `ezkey=${key}&stat=hits&count=1`),
      ),
    )
    t.true(burst.every((r) => r.status === 200 && r.body.status === 200))
    // In the middle of a busy account's writes: a bad number, a missing stat, the other kind, a wrong key, strict mode.
    const bad = await write('/ez', `ezkey=${key}&stat=hits&count=abc`)
    t.is(bad.status, 400)
    t.deepEqual(bad.body, { status: 'error', msg: 'invalid count: not a number' })
    const missing = await write('/c', `ukey=${key}&count=1`)
    t.deepEqual(missing.body, { status: 'error', msg: 'missing required parameter' })
    const kind = await write('/v', `ukey=${key}&key=hits&value=3`)
    t.is(kind.status, 400)
    t.regex(kind.body.msg, /type conflict/)
    const wrongKey = await write('/ez', `ezkey=${key}x&stat=hits&count=1`, { 'x-service-strict': '1' })
    t.is(wrongKey.status, 401)
    t.deepEqual(wrongKey.body, { status: 'error', msg: 'invalid ezkey' })
    await settle(app)
    t.deepEqual(await countOf(user.accountId, 'hits'), { n: 81, s: 81 })
    t.deepEqual(await countOf(user.accountId, 'temp'), { n: 41, s: 20 + 40 * 21 })
  },
)
