// The threshold back-test and the live alert evaluation agree: the same
// points, the live pass run at the end of every minute against the database,
// and the back-test replaying the 1 m rollups, send the same fires and
// resolves at the same instants, cooldown and empty minutes included.
import test from 'ava'
import { randomUUID } from 'node:crypto'
import { evaluateAlerts } from '../../shared/alerts/evaluate.js'
import { insertAlert } from '../../shared/alerts/repo.js'
import { CreateAlertBody } from '../../shared/alerts/schema.js'
import { backtest, readMinutes } from '../../shared/analytics/thresholds.js'
import type { QueuedPoint } from '../../shared/jobs.js'
import { applyBatch } from '../../shared/points/repo.js'
import { refreshRollups } from '../../workers/refresh-rollups.js'
import { appSuite } from '../helpers/suite.js'
import { signUp } from '../helpers/factories.js'

const app = appSuite()

const MINUTES = 60

/** Seeded generator, so a failure can be replayed. */
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
  { kind: 'gauge' as const, alert: { condition_type: 'above', threshold: 50, cooldown_minutes: 5 } },
  { kind: 'gauge' as const, alert: { condition_type: 'below', threshold: 30, cooldown_minutes: 0 } },
  { kind: 'counter' as const, alert: { condition_type: 'above', threshold: 40, cooldown_minutes: 3 } },
  { kind: 'counter' as const, alert: { condition_type: 'below', threshold: 1, cooldown_minutes: 0 } },
]) {
  test.serial(
    `back-test = live evaluation: ${c.kind} ${c.alert.condition_type} ${c.alert.threshold}, cooldown ${c.alert.cooldown_minutes} min`,
    async (t) => {
      const user = await signUp(app.url)
      const [stat] = await app.sql<{ id: string; created_at: Date }[]>`
      insert into stats (account_id, name, kind) values (${user.accountId}, 'load', ${c.kind}) returning id, created_at`
      const body = CreateAlertBody.parse({
        stat_name: 'load',
        channel: 'webhook',
        channel_config: { webhook_url: 'http://127.0.0.1:9/hook' },
        ...c.alert,
      })
      const alert = (await insertAlert(app.sql, user.accountId, body, 'ok', 100))!
      const base = Math.floor(Date.now() / 60_000) * 60 - MINUTES * 60
      // Minute 0 starts with a point (a counter's minutes count as 0 from there); then 0-3 points per
      // minute at random seconds, some exactly on the minute's first second (the edge of the live window).
      const rand = random(c.alert.threshold * 7 + c.alert.cooldown_minutes)
      const points: QueuedPoint[] = [[stat.id, base, 45, null]]
      for (let m = 0; m < MINUTES; m++) {
        const n = Math.floor(rand() * 4)
        for (let k = 0; k < n; k++) {
          const second = rand() < 0.3 ? 0 : Math.floor(rand() * 60)
          points.push([stat.id, base + m * 60 + second, Math.round(rand() * (c.kind === 'counter' ? 30 : 100)), null])
        }
      }
      // Half the minutes folded into the 1 m rollup, the rest still pending: the back-test reads both.
      const half = base + (MINUTES / 2) * 60
      await applyBatch(
        app.sql,
        randomUUID(),
        points.filter((p) => p[1] < half),
      )
      await refreshRollups(app.sql)
      await applyBatch(
        app.sql,
        randomUUID(),
        points.filter((p) => p[1] >= half),
      )

      for (let m = 0; m < MINUTES; m++) await evaluateAlerts(app.sql, new Date((base + (m + 1) * 60) * 1000))
      const live = await app.sql<{ event: string; triggered_at: string }[]>`
      select event, payload->>'triggered_at' as triggered_at from alert_deliveries where alert_id = ${alert.id} order by payload->>'triggered_at', event desc`

      const series = await readMinutes(
        app.sql,
        { id: stat.id, kind: c.kind, createdAt: stat.created_at },
        new Date(base * 1000),
        new Date((base + MINUTES * 60) * 1000),
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
      t.true(b.fired >= 2, `the seeded series breaches more than once (fired ${b.fired}, suppressed ${b.suppressed})`)
      if (c.alert.cooldown_minutes) t.true(b.suppressed >= 1, 'and the cooldown swallows at least one repeat')
    },
  )
}
