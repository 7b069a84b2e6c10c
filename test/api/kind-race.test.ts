// First writes of both kinds to a stat that does not exist yet, at the same moment, through
// two API instances that each decide from their own stat cache (same PostgreSQL, same Redis). Exactly one
// kind is accepted; every write of the other kind answers 400 type conflict and nothing of it is stored.
import test from 'ava'
import { setTimeout as sleep } from 'node:timers/promises'
import { LEASE_MS } from '../../shared/ingest/limits.js'
import { webProcess } from '../helpers/processes.js'
import type { TestApp } from '../helpers/app.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle, stored } from '../helpers/storage.js'

const app = appSuite()
let other: TestApp
test.before(async () => {
  other = await app.another()
  await app.startWorkers()
})

async function proUser() {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

/** How many points the stat holds, and their sum (counts of 1 and values of 1000 tell the kinds apart). */
async function pointsOf(accountId: string, name: string) {
  const [row] = await app.sql<{ n: number; sum: number }[]>`
    select count(*)::int as n, coalesce(sum(value), 0)::float8 as sum from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p
    where s.account_id = ${accountId} and s.name = ${name}`
  return row
}

type Sent = { kind: 'counter' | 'gauge'; value: number; reply: Reply }

const v1 = (base: string, key: string, name: string, kind: Sent['kind']) =>
  kind === 'counter'
    ? request(base, `/api/v1/stats/${name}/count`, { json: { count: 1 }, bearer: key })
    : request(base, `/api/v1/stats/${name}/value`, { json: { value: 1000 }, bearer: key })
const ez = (base: string, key: string, name: string, kind: Sent['kind']) =>
  request(base, '/ez', { form: `ezkey=${key}&stat=${name}&${kind === 'counter' ? 'count=1' : 'value=1000'}` })

/** Three counts and three values to `name` at once, alternating between the two instances. */
async function race(send: typeof v1, key: string, name: string): Promise<Sent[]> {
  const kinds: Array<Sent['kind']> = ['counter', 'gauge', 'counter', 'gauge', 'counter', 'gauge']
  return Promise.all(
    kinds.map(async (kind, i) => ({
      kind,
      value: kind === 'counter' ? 1 : 1000,
      reply: await send(i % 2 ? app.url : other.url, key, name, kind),
    })),
  )
}

for (const [route, send] of [
  ['/api/v1 count/value', v1],
  ['/ez count/value', ez],
] as const) {
  test(`kind race on ${route}, two instances with their own caches: one kind wins, the other is 400 type conflict and not stored`, async (t) => {
    const { user, key } = await proUser()
    let accepted = 0
    for (let round = 0; round < 8; round++) {
      const name = `race.${route.startsWith('/ez') ? 'ez' : 'v1'}.${round}`
      const sent = await race(send, key, name)
      const [stat] = await app.sql<{ kind: Sent['kind'] }[]>`select kind from stats where account_id = ${user.accountId} and name = ${name}`
      t.truthy(stat, `${name} exists`)
      for (const s of sent) {
        if (s.kind === stat.kind) {
          t.is(s.reply.status, 200, `${name}: a ${s.kind} write to a ${stat.kind} is accepted (${s.reply.text})`)
        } else {
          t.is(s.reply.status, 400, `${name}: a ${s.kind} write to a ${stat.kind} is refused (${s.reply.text})`)
          const message = route.startsWith('/ez') ? s.reply.body.msg : s.reply.body.detail
          t.regex(String(message), new RegExp(`type conflict: stat "${name.replace(/\./g, '\\.')}" is a ${stat.kind}`))
          if (!route.startsWith('/ez')) t.is(s.reply.body.code, 'kind_conflict')
        }
      }
      const winners = sent.filter((s) => s.kind === stat.kind)
      accepted += winners.length
      await settle(app)
      const points = await pointsOf(user.accountId, name)
      t.deepEqual(
        points,
        { n: winners.length, sum: winners.reduce((a, s) => a + s.value, 0) },
        `${name}: only the ${stat.kind}'s points are stored`,
      )
    }
    await sleep(2 * LEASE_MS + 100) // leased allowance left unspent goes back to the day's counter
    const after = await stored(app, user.accountId)
    t.is(after.stats, 8)
    t.is(after.points, accepted)
    t.is(after.quotaUsed, accepted, 'refused writes took no allowance')
  })
}

test('kind race across two real web processes, on /api/v1 and /ez at once: one kind per stat, the losers 400 and not stored', async (t) => {
  t.timeout(120_000)
  const [a, b] = (await Promise.all([webProcess(t, app.config), webProcess(t, app.config)])).map((p) => p.url)
  const { user, key } = await proUser()
  let accepted = 0
  for (let round = 0; round < 6; round++) {
    const name = `procs.${round}`
    const kinds: Array<Sent['kind']> = ['counter', 'gauge', 'counter', 'gauge', 'counter', 'gauge', 'gauge', 'counter']
    // Each kind goes through both processes and both route families.
    const sent = await Promise.all(
      kinds.map(async (kind, i) => ({
        kind,
        value: kind === 'counter' ? 1 : 1000,
        reply: await (i % 4 < 2 ? v1 : ez)(i % 2 ? a : b, key, name, kind),
      })),
    )
    const [stat] = await app.sql<{ kind: Sent['kind'] }[]>`select kind from stats where account_id = ${user.accountId} and name = ${name}`
    for (const s of sent) t.is(s.reply.status, s.kind === stat.kind ? 200 : 400, `${name}: ${s.kind} to a ${stat.kind}: ${s.reply.text}`)
    const winners = sent.filter((s) => s.kind === stat.kind)
    accepted += winners.length
    await settle(app)
    const points = await pointsOf(user.accountId, name)
    t.deepEqual(points, { n: winners.length, sum: winners.reduce((x, s) => x + s.value, 0) }, name)
  }
  t.is((await stored(app, user.accountId)).points, accepted)
})
