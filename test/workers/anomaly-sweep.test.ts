import test from 'ava'
import { randomUUID } from 'node:crypto'
import { HOUR } from '../../shared/anomalies/detector.js'
import { newestCompleteHour, sweep } from '../../shared/anomalies/sweep.js'
import { createSql } from '../../shared/db.js'
import { applyBatch } from '../../shared/points/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { applySync } from '../../shared/billing/repo.js'
import { appSuite } from '../helpers/suite.js'

const app = appSuite()

const OPTS = { staleAfterSeconds: 900 }
// A fixed "now" 10 minutes into an hour: the newest complete hour is the one before.
const NOW = new Date((Math.floor(Date.now() / 1000 / HOUR) * HOUR + 600) * 1000)
const NEWEST = newestCompleteHour(NOW)
const later = (hours: number) => new Date(NOW.getTime() + hours * HOUR * 1000)

async function account(plan: string): Promise<string> {
  const [a] = await app.sql<
    { id: string }[]
  >`insert into accounts (email, plan) values (${`${randomUUID()}@example.com`}, ${plan}) returning id`
  return a.id
}

async function stat(accountId: string, name: string, kind: 'counter' | 'gauge'): Promise<string> {
  const [s] = await app.sql<
    { id: string }[]
  >`insert into stats (account_id, name, kind) values (${accountId}, ${name}, ${kind}) returning id`
  return s.id
}

/** One point per hour (in the middle of it), the last value in hour `lastHour`; written with a past t, then rolled up. */
async function backfill(statId: string, values: number[], lastHour = NEWEST): Promise<void> {
  const first = lastHour - (values.length - 1) * HOUR
  await applyBatch(
    app.sql,
    randomUUID(),
    values.map((v, i) => [statId, first + i * HOUR + 1800, v, null]),
  )
  await refreshRollups(app.sql)
}

const steady = (n: number, level: number) => Array.from({ length: n }, (_, i) => level * (1 + 0.05 * Math.sin(i * 1.7)))

async function incidents(statId: string) {
  return app.sql<
    {
      status: string
      direction: string
      detector: string
      level_shift: boolean
      started_at: Date
      ended_at: Date | null
      peak: any
      explanation: string
    }[]
  >`
    select status, direction, detector, level_shift, started_at, ended_at, peak, explanation from anomalies where stat_id = ${statId} order by started_at`
}

async function stateOf(statId: string) {
  const [row] = await app.sql<
    {
      state: string
      reason: string | null
      last_hour: Date | null
      window_verdict: string | null
      window_samples: number | null
      evaluated_at: Date | null
      reached_at: Date | null
    }[]
  >`
    select state, reason, last_hour, window_verdict, window_samples, evaluated_at, reached_at from anomaly_state where stat_id = ${statId}`
  return row as typeof row | undefined
}

test.serial(
  'a backfilled 20x spike in the newest complete hour opens an incident, once, and it closes after two inside hours',
  async (t) => {
    const acc = await account('pro')
    const id = await stat(acc, 'latency', 'gauge')
    await backfill(id, [...steady(48, 100), 2000])
    const first = await sweep(app.sql, NOW, OPTS)
    t.true(first.opened >= 1)
    let inc = await incidents(id)
    t.is(inc.length, 1)
    t.like(inc[0], { status: 'open', direction: 'spike', level_shift: false, ended_at: null })
    t.is(inc[0].started_at.getTime(), NEWEST * 1000)
    t.like(inc[0].peak, { t: NEWEST, observed: 2000 })
    t.regex(inc[0].explanation, /it was 2000, [\d.]+ times the usual spread above\. Expected \d+(\.\d+)? from the 48 trailing hours/)
    t.like(await stateOf(id), { state: 'evaluated', reason: null, window_verdict: 'used', window_samples: 48 })

    // The same sweep again (or a second worker after the first): nothing is scored twice.
    const again = await sweep(app.sql, new Date(NOW.getTime() + 60_000), OPTS)
    t.is(again.hours, 0)
    t.is((await incidents(id)).length, 1)

    // Two normal hours later it closes.
    await backfill(id, [101], NEWEST + HOUR)
    await sweep(app.sql, later(1), OPTS)
    t.is((await incidents(id))[0].status, 'open')
    await backfill(id, [99], NEWEST + 2 * HOUR)
    await sweep(app.sql, later(2), OPTS)
    inc = await incidents(id)
    t.is(inc.length, 1)
    t.like(inc[0], { status: 'closed' })
    // It ended where the first inside hour began.
    t.is(inc[0].ended_at!.getTime(), (NEWEST + HOUR) * 1000)
  },
)

test.serial('a dip fires; a level shift fires once over a day of hourly sweeps and both baselines re-seed', async (t) => {
  const acc = await account('starter')
  const dip = await stat(acc, 'orders', 'counter')
  await backfill(dip, [...steady(48, 500), 20])
  const shift = await stat(acc, 'queue depth', 'gauge')
  const base = steady(48, 100)
  await backfill(shift, base)
  await sweep(app.sql, NOW, OPTS)
  t.like((await incidents(dip))[0], { direction: 'dip', status: 'open' })
  for (let h = 1; h <= 24; h++) {
    await backfill(shift, [300 * (1 + 0.03 * Math.sin(h))], NEWEST + h * HOUR)
    await sweep(app.sql, later(h), OPTS)
  }
  const inc = await incidents(shift)
  t.is(inc.length, 1, JSON.stringify(inc.map((i) => i.explanation)))
  t.like(inc[0], { status: 'closed', direction: 'spike', level_shift: true })
  t.is(inc[0].started_at.getTime(), (NEWEST + HOUR) * 1000)
  t.regex(inc[0].explanation, /level shift: the stat stayed above [\d.]+ for \d+ hours, baselines re-seeded from the new level/)
  const [st] = await app.sql<{ detector: any }[]>`select detector from anomaly_state where stat_id = ${shift}`
  t.is(st.detector.since, NEWEST + HOUR)
  t.true(st.detector.streaming.mean > 250)
})

test.serial(
  'a weekly cycle: five weeks of history with two quiet days a week are not listed; a quiet-day hour at the busy level is',
  async (t) => {
    const acc = await account('business')
    const id = await stat(acc, 'orders.per.hour', 'gauge')
    // The stat is as old as its history (the sweep reads three weeks only for a stat that old).
    await app.sql`update stats set created_at = ${new Date((NEWEST - 36 * 24 * HOUR) * 1000)} where id = ${id}`
    // Days counted back from NEWEST's: day 0 and day 1 of every week are quiet (50 all day); the others follow a
    // daily cycle peaking at 300 at NEWEST's hour of the day. Noise within 5 %.
    const level = (t: number, i: number) => {
      const day = ((Math.floor((t - NEWEST) / 86_400) % 7) + 7) % 7
      const busy = 200 - 100 * Math.cos(2 * Math.PI * ((t - NEWEST) / 86_400 + 0.5))
      return (day <= 1 ? 50 : busy) * (1 + 0.05 * Math.sin(i * 1.7))
    }
    const hours = 35 * 24
    await backfill(
      id,
      Array.from({ length: hours }, (_, i) => level(NEWEST - (hours - i) * HOUR, i)),
      NEWEST - HOUR,
    )
    await sweep(app.sql, NOW, OPTS)
    t.deepEqual(
      (await incidents(id)).map((i) => i.explanation),
      [],
      'quiet days are part of the weekly cycle',
    )
    const [st] = await app.sql<{ detector: any }[]>`select detector from anomaly_state where stat_id = ${id}`
    t.is(st.detector.weekly.on, true)

    // NEWEST is on a quiet day at the hour the busy days peak: at the busy level it is an anomaly.
    await backfill(id, [300], NEWEST)
    await sweep(app.sql, new Date(NOW.getTime() + 60_000), OPTS)
    const inc = await incidents(id)
    t.is(inc.length, 1)
    t.like(inc[0], { status: 'open', direction: 'spike' })
    t.is(inc[0].started_at.getTime(), NEWEST * 1000)
    t.regex(
      inc[0].explanation,
      /on [A-Z][a-z]+days at \d\d:00 UTC this stat \(gauge mean\) is usually [\d.]+ to \d+(\.\d+)?; it was 300, .*following its weekly cycle \(3 weeks\)/,
    )
  },
)

test.serial('sparse counters, constant gauges and noise within 10 % are scored and never listed', async (t) => {
  const acc = await account('business')
  const sparse = await stat(acc, 'signups', 'counter')
  await backfill(sparse, Array.from({ length: 72 }, (_, i) => [0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 3, 0][i % 12]).concat([6]))
  const constant = await stat(acc, 'replicas', 'gauge')
  await backfill(constant, new Array(72).fill(4))
  const noisy = await stat(acc, 'temperature', 'gauge')
  await backfill(
    noisy,
    Array.from({ length: 73 }, (_, i) => 20 * (1 + 0.1 * Math.sin(i * 2.3))),
  )
  await sweep(app.sql, NOW, OPTS)
  for (const id of [sparse, constant, noisy]) {
    t.is((await incidents(id)).length, 0)
    t.like(await stateOf(id), { state: 'evaluated', reason: null, window_verdict: 'used' })
  }
})

test.serial('reasons: no_rollup, stale, short, no_signal; a free account is not swept until it upgrades', async (t) => {
  const acc = await account('pro')
  const stale = await stat(acc, 'stale', 'gauge')
  await backfill(stale, steady(30, 10))
  const short = await stat(acc, 'short', 'gauge')
  await backfill(short, [1, 2, 3])
  const zeros = await stat(acc, 'zeros', 'counter')
  await backfill(zeros, new Array(30).fill(0))
  const free = await account('free')
  const freeStat = await stat(free, 'spiky', 'gauge')
  await backfill(freeStat, [...steady(48, 100), 5000])
  // After the last refresh: a stat whose points were never rolled up, and one whose rollup stopped refreshing an hour ago.
  const noRollup = await stat(acc, 'fresh', 'gauge')
  await applyBatch(app.sql, randomUUID(), [[noRollup, NEWEST + 60, 5, null]])
  await app.sql`update rollup_state set refreshed_at = ${new Date(NOW.getTime() - 3_600_000)} where stat_id = ${stale}`
  await app.sql`insert into rollup_pending (stat_id, bucket, count, sum, min, max) values (${stale}, ${new Date(NOW.getTime() - 3_000_000)}, 1, 1, 1, 1)`

  await sweep(app.sql, NOW, OPTS)
  t.like(await stateOf(noRollup), { state: 'skipped', reason: 'no_rollup', last_hour: null, evaluated_at: null })
  t.like(await stateOf(stale), { state: 'skipped', reason: 'stale', last_hour: null })
  t.like(await stateOf(short), { state: 'skipped', reason: 'short', window_verdict: 'short', window_samples: 2 })
  t.like(await stateOf(zeros), { state: 'skipped', reason: 'no_signal', window_verdict: 'no_signal', window_samples: 29 })
  t.is(await stateOf(freeStat), undefined)
  t.is((await incidents(freeStat)).length, 0)

  // Free -> starter: the next sweep scores it and finds the spike.
  await app.sql`update accounts set plan = 'starter' where id = ${free}`
  await sweep(app.sql, new Date(NOW.getTime() + 120_000), OPTS)
  t.like(await stateOf(freeStat), { state: 'evaluated', reason: null })
  t.like((await incidents(freeStat))[0], { status: 'open', direction: 'spike' })
  const [acct] = await app.sql`select swept_at from anomaly_account_sweeps where account_id = ${free}`
  t.is(acct.swept_at.getTime(), NOW.getTime() + 120_000)
})

test.serial("two sweeps at once score each stat's hour once and record each incident once", async (t) => {
  const acc = await account('pro')
  const ids: string[] = []
  for (let i = 0; i < 24; i++) {
    const id = await stat(acc, `s${i}`, 'gauge')
    ids.push(id)
    await backfill(id, [...steady(24, 50), i % 3 === 0 ? 5000 : 50])
  }
  const a = createSql(app.config.databaseUrl, { max: 2 })
  const b = createSql(app.config.databaseUrl, { max: 2 })
  try {
    const when = later(0.5)
    const [ra, rb] = await Promise.all([sweep(a, when, { ...OPTS, pageSize: 3 }), sweep(b, when, { ...OPTS, pageSize: 3 })])
    const mine = await app.sql<
      { n: number }[]
    >`select count(*)::int as n from anomaly_state where stat_id = any(${ids}::uuid[]) and last_hour = ${new Date(NEWEST * 1000)}`
    t.is(mine[0].n, 24)
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from anomalies where stat_id = any(${ids}::uuid[])`
    t.is(n, 8)
    // Every stat the two sweeps reached (these 24, and two of the previous test's whose rollups the backfills here refreshed)
    // was reached by exactly one of them; the 24 had their 25 backfilled hours replayed (history written before their
    // first sweep is scored), once: a third sweep finds nothing left to score.
    const [{ reached }] = await app.sql<
      { reached: number }[]
    >`select count(*)::int as reached from anomaly_state where reached_at = ${when}`
    t.is(ra.reached + rb.reached, reached)
    t.true(ra.hours + rb.hours >= 24 * 25)
    const [{ marks }] = await app.sql<{ marks: number }[]>`select count(*)::int as marks from anomaly_rescore`
    t.is(marks, 0)
    t.is((await sweep(app.sql, when, OPTS)).hours, 0)
  } finally {
    await a.end()
    await b.end()
  }
})

// 14 days backfilled on the free plan, with a spike 7 days back, then an upgrade.
const FORTNIGHT = 14 * 24
const withSpike = () => steady(FORTNIGHT, 100).map((v, i) => (i === FORTNIGHT - 7 * 24 ? 2000 : v))
const spikeHour = NEWEST - (7 * 24 - 1) * HOUR

test.serial(
  'history backfilled on the free plan is scored after an upgrade: its incident reaches the list, as for an account created paid',
  async (t) => {
    const free = await account('free')
    const id = await stat(free, 'upgraded.latency', 'gauge')
    await backfill(id, withSpike())
    await sweep(app.sql, NOW, OPTS)
    t.is(await stateOf(id), undefined, 'the free plan does not detect')
    await app.sql`update accounts set plan = 'pro' where id = ${free}`
    await sweep(app.sql, NOW, OPTS)
    const found = await incidents(id)
    t.true(
      found.some((i) => i.started_at.getTime() === spikeHour * 1000),
      JSON.stringify(found.map((i) => i.started_at)),
    )
    t.not((await app.sql`select last_detected_at from anomaly_state where stat_id = ${id}`)[0].last_detected_at, null, 'ever_detected')
    t.is((await app.sql`select count(*)::int as n from anomaly_rescore where stat_id = ${id}`)[0].n, 0, 'the mark is spent')

    // The same history in an account created paid: the same incident.
    const paid = await account('pro')
    const twin = await stat(paid, 'upgraded.latency', 'gauge')
    await backfill(twin, withSpike())
    await sweep(app.sql, NOW, OPTS)
    t.deepEqual(
      (await incidents(twin)).map((i) => i.started_at.getTime()),
      found.map((i) => i.started_at.getTime()),
    )
  },
)

test.serial('history written during a downgrade is scored when the plan detects again (billing sync upgrade)', async (t) => {
  const acc = await account('pro')
  const id = await stat(acc, 'regained.latency', 'gauge')
  await backfill(id, steady(48, 100), NEWEST - (FORTNIGHT - 1) * HOUR)
  await sweep(app.sql, NOW, OPTS)
  t.truthy(await stateOf(id))
  const sync = (plan: 'free' | 'pro') =>
    applySync(app.sql, acc, { plan, subscriptionId: null, status: null, priceId: null, pastDue: false, currentPeriodEnd: null }, NOW)
  await app.sql`insert into billing_customers (account_id, customer_id) values (${acc}, ${`cus_${randomUUID()}`})`
  await sync('free')
  await backfill(id, withSpike())
  t.is((await app.sql`select count(*)::int as n from anomaly_rescore where stat_id = ${id}`)[0].n, 0, 'not marked while free')
  await sweep(app.sql, NOW, OPTS)
  t.false((await incidents(id)).some((i) => i.started_at.getTime() === spikeHour * 1000))
  await sync('pro')
  await sweep(app.sql, NOW, OPTS)
  t.true((await incidents(id)).some((i) => i.started_at.getTime() === spikeHour * 1000))
})

test.serial('a sweep past its replay budget leaves the other replays, marks kept, to the next sweeps, which score them all', async (t) => {
  const acc = await account('pro')
  const ids: string[] = []
  for (const name of ['budget.a', 'budget.b', 'budget.c']) {
    const id = await stat(acc, name, 'gauge')
    await backfill(id, [...steady(30, 100), 2000])
    ids.push(id)
  }
  // One stat a page and no budget: each sweep replays one page, then leaves every other marked stat for later.
  const opts = { staleAfterSeconds: 900, pageSize: 1, replayBudgetMs: 0 }
  const listed = async () => (await Promise.all(ids.map(incidents))).filter((x) => x.length > 0).length
  const marked = async () =>
    (await app.sql<{ n: number }[]>`select count(*)::int as n from anomaly_rescore where stat_id = any(${ids}::uuid[])`)[0].n
  const first = await sweep(app.sql, NOW, opts)
  t.true(first.deferred >= 2, `deferred ${first.deferred}`)
  t.true((await listed()) <= 1)
  t.true((await marked()) >= 2, 'the stats left keep their marks')
  let sweeps = 1
  while ((await listed()) < 3 && sweeps < 10) {
    await sweep(app.sql, NOW, opts)
    sweeps++
  }
  t.is(await listed(), 3, 'every stat is replayed within a few sweeps')
  t.is(await marked(), 0)
  // The same replays with the default budget happen in one sweep.
  t.is((await sweep(app.sql, NOW, OPTS)).deferred, 0)
})
