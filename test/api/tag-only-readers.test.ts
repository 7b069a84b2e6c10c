// A stat written only with tags is read everywhere a stat is (docs/decisions.md §24): the same points, stored once
// in a stat's tagged series (its own row holding none) and once in an untagged stat of another account, answer the
// same figures in every reader of a stat as a whole: the stats list, the dashboard summary, a dashboard's cards, the
// embeds (JSON and HTML), correlations, threshold suggestions (minute values and percentiles), the extent shown
// before a delete, the stat read (with and without a group-by) and the export.
import test, { type ExecutionContext } from 'ava'
import { randomUUID } from 'node:crypto'
import type { QueuedPoint } from '../../shared/jobs.js'
import { applyBatch } from '../../shared/points/repo.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite()
const HOUR = 3600
const NOW = Math.floor(Date.now() / 1000)
const thisHour = Math.floor(NOW / HOUR) * HOUR
const HOURS = 48
const CREATED = new Date((NOW - 60 * 86_400) * 1000)

/**
 * Two points in each of the last HOURS hours (at 10 and 40 past) and a few in the current hour, integers so that
 * sums and means come out the same in any order of addition. `host` says which series a tagged stat keeps each in.
 */
function pointsOf(kind: 'counter' | 'gauge'): Array<{ t: number; value: number; host: string }> {
  const out: Array<{ t: number; value: number; host: string }> = []
  for (let h = HOURS; h >= 0; h--) {
    for (const [minute, host] of [
      [10, 'a'],
      [40, 'b'],
    ] as const) {
      const t = thisHour - h * HOUR + minute * 60
      if (t >= NOW - 5) continue
      // A gauge that moves (so correlations have something to follow), a counter that follows it.
      const base = 50 + ((h * 7) % 23) + (host === 'b' ? 10 : 0)
      out.push({ t, value: kind === 'gauge' ? base : 2 * base + (h % 3), host })
    }
  }
  return out
}

interface Account {
  user: User
  key: string
  ids: Record<string, string>
}

/** An account holding `cpu` (gauge) and `requests` (counter): each stat's points in its tagged series, or in the stat itself. */
async function account(tagged: boolean): Promise<Account> {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'pro' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const ids: Record<string, string> = {}
  const points: QueuedPoint[] = []
  for (const [name, kind] of [
    ['cpu', 'gauge'],
    ['requests', 'counter'],
  ] as const) {
    const [stat] = await app.sql<{ id: string }[]>`
      insert into stats (account_id, name, kind, created_at) values (${user.accountId}, ${name}, ${kind}, ${CREATED}) returning id`
    ids[name] = stat.id
    const series = new Map<string, string>()
    if (tagged)
      for (const host of ['a', 'b']) {
        const [s] = await app.sql<{ id: string }[]>`
          insert into stats (account_id, name, kind, created_at, parent_id, tags)
          values (${user.accountId}, ${name}, ${kind}, ${CREATED}, ${stat.id}, ${JSON.stringify({ host })}::text::jsonb) returning id`
        series.set(host, s.id)
      }
    for (const p of pointsOf(kind)) points.push([tagged ? series.get(p.host)! : stat.id, p.t, p.value, null])
  }
  await applyBatch(app.sql, randomUUID(), points)
  return { user, key, ids }
}

let tagged: Account
let plain: Account
test.before(async () => {
  ;[tagged, plain] = await Promise.all([account(true), account(false)])
  const [{ n }] = await app.sql<{ n: number }[]>`
    select (select count(*) from points where stat_id = any(${Object.values(tagged.ids)}::uuid[]))
         + (select coalesce(sum(n), 0) from point_blocks where stat_id = any(${Object.values(tagged.ids)}::uuid[])) as n`
  if (Number(n) !== 0) throw new Error('the tagged stats themselves must hold no point')
})

/** A window's end is the request's instant: left out of the comparison (its start is aligned to the buckets). */
const steady = (x: unknown) => JSON.parse(JSON.stringify(x ?? null, (k, v) => (k === 'to' && typeof v === 'string' ? undefined : v)))

/**
 * The same read of both accounts. A window ends at the request's time: a read that straddles a minute's (or an
 * hour's) edge may differ from its twin for that alone, so a pair that differs is read once more.
 */
async function twins(t: ExecutionContext, read: (a: Account) => Promise<Reply>, shape: (r: Reply) => unknown = (r) => r.body) {
  let last: [unknown, unknown] = [null, null]
  for (let i = 0; i < 2; i++) {
    const [a, b] = [await read(tagged), await read(plain)]
    t.is(a.status, 200, a.text)
    t.is(b.status, 200, b.text)
    last = [steady(shape(a)), steady(shape(b))]
    if (JSON.stringify(last[0]) === JSON.stringify(last[1])) break
  }
  return last
}

const session = (path: string) => (a: Account) => request(app.url, path, { session: a.user.session })
const bearer = (path: string) => (a: Account) => request(app.url, path, { bearer: a.key })

test('the stats list: each stat once, its newest point from its series', async (t) => {
  const [a, b] = await twins(t, bearer('/api/v1/stats'), (r) =>
    r.body.stats.map((s: any) => ({ name: s.name, kind: s.kind, last_point_at: s.last_point_at })),
  )
  t.deepEqual(a, b)
  t.is((a as any[]).length, 2)
  t.truthy((a as any[])[0].last_point_at)
})

test('the dashboard summary (the stats page): totals, averages, min, max, sparkline and last value alike', async (t) => {
  for (const range of ['24h', '7d']) {
    const [a, b] = await twins(t, session(`/api/v1/dashboard?range=${range}`), (r) => ({
      range: r.body.range,
      stats: r.body.stats.map(({ id: _id, series: _series, ...s }: any) => s),
    }))
    t.deepEqual(a, b, range)
    t.true((a as any).stats.every((s: any) => s.summary.n > 0 && s.last_value !== null))
  }
})

test("a dashboard's cards: each stat drawn as a whole reads its series", async (t) => {
  const boardOf = new Map<Account, string>()
  for (const acct of [tagged, plain]) {
    const made = await request(app.url, '/api/v1/dashboards', {
      bearer: acct.key,
      json: { name: 'Fleet', cards: [{ stats: ['cpu', 'requests'] }, { stats: ['requests'], range: '7d' }] },
    })
    t.is(made.status, 201, made.text)
    boardOf.set(acct, made.body.dashboard.id)
  }
  const [a, b] = await twins(
    t,
    (acct) => request(app.url, `/api/v1/dashboards/${boardOf.get(acct)}/data`, { session: acct.user.session }),
    (r) => r.body.cards.map(({ id: _id, ...c }: any) => c),
  )
  t.deepEqual(a, b)
  t.true((a as any[]).every((c) => c.series.every((s: any) => s.points.length > 0)))
})

test('the embeds, JSON and HTML, read the shared stat as a whole', async (t) => {
  const shares = new Map<Account, { token: string; id: string }>()
  for (const acct of [tagged, plain]) {
    const share = await request(app.url, '/api/v1/stats/requests/share', { method: 'POST', bearer: acct.key })
    t.is(share.status, 201, share.text)
    t.is(share.body.share.stat_id, acct.ids.requests)
    shares.set(acct, { token: share.body.share.token, id: share.body.share.stat_id })
  }
  const embed = (kind: string, range: string) => (acct: Account) =>
    request(app.url, `${kind}/${shares.get(acct)!.id}?token=${shares.get(acct)!.token}&range=${range}`)
  for (const range of ['24h', '7d']) {
    const [a, b] = await twins(t, embed('/api/v1/embed', range), (r) => ({ range: r.body.range, points: r.body.points }))
    t.deepEqual(a, b, range)
    t.true((a as any).points.length > 20)
  }
  const [a, b] = await twins(t, embed('/embed', '24h'), (r) => r.text)
  t.is(a, b)
  const total = (await embed('/api/v1/embed', '24h')(tagged)).body.points.reduce((s: number, p: any) => s + p.value, 0)
  t.true(total > 1000 && total < 10_000)
  t.true((a as string).includes(`>${total} total · last 24h`), 'the headline is the whole total')
})

test('correlations compare a tag-only stat as a whole, as target and as candidate', async (t) => {
  for (const stat of ['cpu', 'requests']) {
    const [a, b] = await twins(t, bearer(`/api/v1/correlations?stat=${stat}&range=7d&method=pearson&transform=none`))
    t.deepEqual(a, b, stat)
    t.is((a as any).results.length, 1, `${stat}: the other stat is compared`)
    t.true((a as any).target_n >= 24)
  }
})

test('threshold suggestions back-test a tag-only stat as a whole: minute values and percentiles', async (t) => {
  for (const q of ['stat=cpu', 'stat=requests', 'stat=cpu&aggregation=p95&window_minutes=60', 'stat=cpu&threshold=70']) {
    const [a, b] = await twins(t, bearer(`/api/v1/thresholds/suggest?${q}&lookback=7d`))
    t.deepEqual(a, b, q)
  }
})

test('the extent a delete names counts the series of a tag-only stat', async (t) => {
  const [a, b] = await twins(t, bearer('/api/v1/stats/cpu/extent'))
  t.deepEqual(a, b)
  t.is((a as any).points, pointsOf('gauge').length)
})

test('the stat read, as a whole and with a group-by, answers the untagged figures', async (t) => {
  for (const q of ['range=24h&percentiles=50,95', 'range=7d', 'range=1h']) {
    const [a, b] = await twins(t, bearer(`/api/v1/stats/cpu?${q}`), (r) => ({ range: r.body.range, points: r.body.points }))
    t.deepEqual(a, b, q)
  }
  // The whole of a group-by read is the whole read's.
  const [g, w] = await twins(
    t,
    (acct) => request(app.url, `/api/v1/stats/requests?range=7d${acct === tagged ? '&group_by=host' : ''}`, { bearer: acct.key }),
    (r) => r.body.points,
  )
  t.deepEqual(g, w)
  const grouped = await bearer('/api/v1/stats/requests?range=7d&group_by=host')(tagged)
  t.deepEqual(
    grouped.body.groups.map((x: any) => x.tags),
    [{ host: 'a' }, { host: 'b' }],
  )
})

test('the export holds the same observations, each series with its tags', async (t) => {
  const rows = (r: Reply) =>
    r.text
      .trim()
      .split('\n')
      .slice(1, -1)
      .map((line) => line.split(',').slice(0, 5).join(','))
      .sort()
  const [a, b] = await twins(t, bearer('/api/v1/export?format=csv&range=7d'), rows)
  t.deepEqual(a, b)
  t.is((a as string[]).length, pointsOf('gauge').length + pointsOf('counter').length)
  const csv = await bearer('/api/v1/export?format=csv&range=7d')(tagged)
  t.true(csv.text.split('\n').some((l) => l.endsWith(',host=a')))
  const points = (r: Reply) =>
    Object.fromEntries(r.body.stats.map((s: any) => [`${s.name}:${s.kind}`, s.points.map((p: any) => `${p.t}=${p.value}`).sort()]))
  const [ja, jb] = await twins(t, bearer('/api/v1/export?format=json&range=7d'), points)
  t.deepEqual(ja, jb)
})
