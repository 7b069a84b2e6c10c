// The threshold helper's back-test on a percentile and the live evaluation of a percentile alert agree (issue
// 28): the same points, the live pass run at the end of every minute against the database, and the back-test
// replaying the percentile of each minute's trailing window, send the same fires and resolves at the same
// instants. Values are multiples of 10 and thresholds sit between them, farther than the sketch's 1 % from any
// value, so the back-test's sketch (within 1 %) and the live read (exact under an hour, sketches beyond) must land
// on the same side at every minute. A window of 90 minutes makes the live read merge hour sketches.
import test from 'ava'
import { randomUUID } from 'node:crypto'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { insertAlert } from '../../shared/alerts/repo.js'
import { CreateAlertBody } from '../../shared/alerts/schema.js'
import { backtest, readPercentileMinutes } from '../../shared/analytics/thresholds.js'
import type { QueuedPoint } from '../../shared/jobs.js'
import { applyBatch } from '../../shared/points/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'

const app = appSuite()

const MINUTES = 150

function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
  }
}

for (const c of [
  { condition_type: 'above', aggregation: 'p95', threshold: 75, window_minutes: 3, cooldown_minutes: 5 },
  { condition_type: 'below', aggregation: 'p50', threshold: 45, window_minutes: 2, cooldown_minutes: 0 },
  { condition_type: 'above', aggregation: 'p90', threshold: 85, window_minutes: 90, cooldown_minutes: 0 },
] as const) {
  test.serial(
    `back-test = live evaluation: ${c.aggregation} over ${c.window_minutes} min ${c.condition_type} ${c.threshold}, cooldown ${c.cooldown_minutes} min`,
    async (t) => {
      const user = await signUp(app.url)
      const [stat] = await app.sql<{ id: string; created_at: Date }[]>`
      insert into stats (account_id, name, kind) values (${user.accountId}, 'latency', 'gauge') returning id, created_at`
      const body = CreateAlertBody.parse({
        stat_name: 'latency',
        channel: 'webhook',
        channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
        ...c,
      })
      const alert = (await insertAlert(app.sql, user.accountId, body, 'ok', 100))!
      const base = Math.floor(Date.now() / 60_000) * 60 - MINUTES * 60
      // 0-4 points a minute at random seconds, some on the minute's first second; calm and busy stretches of
      // 20 minutes, so the long window also crosses its threshold.
      const rand = random(c.threshold * 13 + c.window_minutes)
      const points: QueuedPoint[] = []
      for (let m = 0; m < MINUTES; m++) {
        const busy = Math.floor(m / 20) % 2 === 1
        const n = Math.floor(rand() * 5)
        for (let k = 0; k < n; k++) {
          const second = rand() < 0.3 ? 0 : Math.floor(rand() * 60)
          const value = 10 * (1 + Math.floor(rand() * (busy ? 10 : 8)))
          points.push([stat.id, base + m * 60 + second, value, null])
        }
      }
      // The first part refreshed (its complete hours get sketches), the rest still pending.
      const cut = base + (MINUTES - 40) * 60
      await applyBatch(
        app.sql,
        randomUUID(),
        points.filter((p) => p[1] < cut),
      )
      await refreshRollups(app.sql)
      await applyBatch(
        app.sql,
        randomUUID(),
        points.filter((p) => p[1] >= cut),
      )
      if (c.window_minutes > 60) {
        const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from sketches_1h where stat_id = ${stat.id}`
        t.true(n >= 1, `hour sketches in the long window (${n})`)
      }

      for (let m = 0; m < MINUTES; m++) await evaluateAlerts(app.sql, new Date((base + (m + 1) * 60) * 1000))
      const live = await app.sql<{ event: string; triggered_at: string }[]>`
      select event, payload->>'triggered_at' as triggered_at from alert_deliveries where alert_id = ${alert.id} order by payload->>'triggered_at', event desc`

      const series = await readPercentileMinutes(
        app.sql,
        { id: stat.id },
        new Date(base * 1000),
        new Date((base + MINUTES * 60) * 1000),
        c.window_minutes,
        c.aggregation,
      )
      const rule = {
        condition: alert.condition_type,
        threshold: alert.threshold,
        windowMinutes: alert.window_minutes,
        direction: alert.direction,
        cooldownMinutes: alert.cooldown_minutes,
      }
      const b = backtest(rule, series, Infinity)
      const replayed = b.incidents
        .filter((i) => i.notified)
        .flatMap((i) => [
          { event: 'fired', triggered_at: i.startedAt.toISOString() },
          ...(i.endedAt ? [{ event: 'resolved', triggered_at: i.endedAt.toISOString() }] : []),
        ])
      t.deepEqual(
        live.map((d) => ({ ...d })),
        replayed,
      )
      t.is(live.filter((d) => d.event === 'fired').length, b.fired)
      // A 90-minute window moves slowly: one fire and its resolve within 150 minutes.
      const want = c.window_minutes > 60 ? 1 : 2
      t.true(b.fired >= want, `the seeded series breaches at least ${want} times (fired ${b.fired}, suppressed ${b.suppressed})`)
      t.true(
        live.some((d) => d.event === 'resolved'),
        'and recovers',
      )
      // Every minute value the back-test saw is the one the live pass stored then (within the sketch's 1 %).
      const [last] = await app.sql<{ last_value: number | null }[]>`select last_value from alerts where id = ${alert.id}`
      const final = series.values[series.values.length - 1]
      t.true(
        final === null ? last.last_value === null : Math.abs(final - last.last_value!) <= 0.01 * Math.abs(last.last_value!),
        `last minute: back-test ${final}, live ${last.last_value}`,
      )
    },
  )
}
