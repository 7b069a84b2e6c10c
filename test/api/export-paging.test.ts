// An export completes whatever its size (each page a
// statement within the statement timeout), and a failure after the headers
// reaches the client as an aborted response, never a file that looks whole.
import test from 'ava'
import { createSql } from '../../shared/db.js'
import { exportCsv, secondsOf } from '../../shared/export/stream.js'
import type { ExportWindow } from '../../shared/export/window.js'
import { listStats } from '../../shared/stats/repo.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const BASE = Math.floor(Date.now() / 1000) - 86_400

/** An account with one gauge written through the API, then `extra` rows added straight to its points. */
async function statWith(name: string, fill: (id: string) => Promise<unknown>) {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, '/ez', { json: { ezkey: key, data: [{ stat: name, value: 0.5, t: BASE - 10 }] } })
  if (res.body.accepted !== 1) throw new Error(res.text)
  await settle(app)
  const [stat] = await listStats(app.sql, user.accountId)
  await fill(stat.id)
  return { key, stat }
}

const window = (): ExportWindow => ({
  requested: 'custom',
  from: new Date((BASE - 3600) * 1000),
  to: new Date(),
  retentionDays: 30,
  clamped: false,
})

test.serial(
  'an export slower than the statement timeout completes, rows equal to the table, ties and sub-second times across page edges',
  async (t) => {
    const { stat } = await statWith('paged', async (id) => {
      // 29,999 rows: one a second, triples sharing a second, a run of 2,500 at one second (longer than a page),
      // and microsecond-apart times so that a page's last key must be exact.
      await app.sql`insert into points (stat_id, ts, value)
      select ${id}, to_timestamp(${BASE} + i / 3), round((random() * 100)::numeric, 2)::float8 from generate_series(0, 19999) i`
      await app.sql`insert into points (stat_id, ts, value) select ${id}, to_timestamp(${BASE + 9000}), i from generate_series(1, 2500) i`
      await app.sql`insert into points (stat_id, ts, value)
      select ${id}, to_timestamp(${BASE + 9100}::float8 + i / 1e6), i from generate_series(1, 7499) i`
    })
    // A timeout well above what one page's statement takes on a loaded machine (0.3 s failed a full suite's run
    // there), and a reader slow enough that the whole export takes twice as long.
    const slow = createSql(app.config.databaseUrl, { max: 1, statementTimeoutSeconds: 1.5 })
    try {
      // The premise: one streamed statement read by a client that takes its time is cut by this timeout.
      const cursor = async () => {
        for await (const _ of slow`select ts, value from points where stat_id = ${stat.id} order by ts`.cursor(1000)) await sleep(100)
      }
      await t.throwsAsync(cursor, { message: /statement timeout/ })

      let csv = ''
      for await (const chunk of exportCsv(slow, [stat], window(), 1000)) {
        csv += chunk
        await sleep(100)
      }
      const lines = csv.trimEnd().split('\n')
      t.is(lines[0], 'stat,kind,timestamp,iso_time,value,tags')
      t.regex(lines.at(-1)!, /^# requested_range=custom /)
      const got = lines.slice(1, -1).map((l) => l.split(','))
      const times = got.map((f) => Number(f[2]))
      t.true(
        times.every((x, i) => i === 0 || times[i - 1] <= x),
        'rows by time',
      )
      const want = await app.sql<{ t: string; value: number }[]>`
      select extract(epoch from ts)::bigint::text as t, value from stat_points(${stat.id}, '-infinity', 'infinity')`
      const key = (t: string, v: string | number) => `${t},${v}`
      t.is(got.length, 30_000, '29,999 rows added and the one written through the API')
      t.deepEqual(got.map((f) => key(f[2], f[4])).sort(), want.map((r) => key(r.t, r.value)).sort())
    } finally {
      await slow.end({ timeout: 1 })
    }
  },
)

test.serial('a failure after the headers aborts the response: the client sees an error, not a short file that ends cleanly', async (t) => {
  const { key } = await statWith(
    'aborted',
    (id) => app.sql`
    insert into points (stat_id, ts, value) select ${id}, to_timestamp(${BASE} + i), i from generate_series(1, 1000) i`,
  )
  // Points locked: the export's first page waits behind the lock after the header line went out.
  const locker = await app.sql.reserve()
  try {
    await locker`begin`
    await locker`lock table points in access exclusive mode`
    for (const format of ['csv', 'json']) {
      const res = await fetch(`${app.url}/api/v1/stats/aborted/export?range=7d&format=${format}`, {
        headers: { authorization: `Bearer ${key}` },
      })
      t.is(res.status, 200)
      const body = res.text()
      let blocked: { pid: number }[] = []
      for (let i = 0; i < 200 && !blocked.length; i++) {
        await sleep(50)
        blocked = await app.sql<{ pid: number }[]>`
          select pid from pg_stat_activity
          where datname = current_database() and application_name = 'metrics-web' and wait_event_type = 'Lock'`
      }
      t.is(blocked.length, 1, 'the export waits for its first page')
      // The page's statement fails (as a statement timeout or a lost connection would).
      await app.sql`select pg_terminate_backend(${blocked[0].pid})`
      const err = await t.throwsAsync(body)
      t.truthy(err, format)
    }
  } finally {
    await locker`rollback`
    locker.release()
  }
  // And with the lock gone the same export is whole.
  const whole = await request(app.url, '/api/v1/stats/aborted/export?range=7d&format=csv', { bearer: key })
  t.is(whole.status, 200)
  t.is(whole.text.trimEnd().split('\n').length, 1 + 1001 + 1)
})

test('whole seconds are those PostgreSQL gave before: the epoch rounded half away from zero', async (t) => {
  const times = ['1764000000.5', '1764000000.499999', '1764000000.000001', '-0.5', '-1.500001', '0']
  const pg = await app.sql<{ us: string; s: string }[]>`
    select (extract(epoch from x) * 1000000)::int8 as us, extract(epoch from x)::bigint::text as s
    from unnest(${times}::numeric[]) e, lateral (select 'epoch'::timestamptz + e * interval '1 second' as x) y`
  t.is(pg.length, times.length)
  for (const r of pg) t.is(String(secondsOf(Number(r.us))), r.s, r.us)
})
