import test from 'ava'
import { csvField } from '../../shared/export/stream.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const now = () => Math.floor(Date.now() / 1000)
const DAY = 86_400

/** A free account (30 days retention) with two stats, one point 40 days old. */
async function account() {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const n = now()
  const json = {
    ezkey: key,
    data: [
      { stat: 'b.gauge', value: 1.5, t: n - 3600 },
      { stat: 'b.gauge', value: 2.5, t: n - 60 },
      { stat: 'a counter', count: 2, t: n - 7200 },
      { stat: 'a counter', count: 3, t: n - 40 * DAY },
    ],
  }
  const res = await request(app.url, '/ez', { json })
  if (res.body.accepted !== 4) throw new Error(res.text)
  await settle(app)
  return { user, key }
}

test('4.5 JSON is the default: window fields, stats by name, points by time; headers state the applied window', async (t) => {
  const { key } = await account()
  const res = await request(app.url, '/api/v1/export?range=7d', { bearer: key })
  t.is(res.status, 200)
  t.regex(res.headers.get('content-type') ?? '', /application\/json/)
  t.is(res.body.requested_range, '7d')
  t.is(res.body.retention_days, 30)
  t.is(res.body.range_clamped_by_retention, false)
  t.deepEqual(
    res.body.stats.map((s: { name: string }) => s.name),
    ['a counter', 'b.gauge'],
  )
  t.deepEqual(
    res.body.stats[1].points.map((p: { value: number }) => p.value),
    [1.5, 2.5],
  )
  t.deepEqual(
    res.body.stats[0].points.map((p: { value: number }) => p.value),
    [2],
    'the 40-day-old point is outside 7d',
  )
  t.is(res.headers.get('x-service-export-requested-range'), '7d')
  t.is(res.headers.get('x-service-export-from'), res.body.applied_from)
  t.is(res.headers.get('x-service-export-to'), res.body.applied_to)
  t.is(res.headers.get('x-service-export-retention-days'), '30')
  t.is(res.headers.get('x-service-export-range-clamped'), 'false')
  t.true(Math.abs(Date.parse(res.body.applied_to) - Date.parse(res.body.applied_from) - 7 * DAY * 1000) < 5000)
})

test('4.5 CSV: header row, one row per observation, then the trailing comment line', async (t) => {
  const { key } = await account()
  const res = await request(app.url, '/api/v1/export?format=csv&range=24h', { bearer: key })
  t.is(res.status, 200)
  t.regex(res.headers.get('content-type') ?? '', /text\/csv/)
  const lines = res.text.trimEnd().split('\n')
  t.is(lines[0], 'stat,kind,timestamp,iso_time,value,tags')
  t.is(lines.length, 5)
  const [stat, kind, ts, iso, value] = lines[1].split(',')
  t.deepEqual([stat, kind, value], ['a counter', 'counter', '2'])
  t.is(new Date(Number(ts) * 1000).toISOString(), iso)
  t.deepEqual(
    lines.slice(2, 4).map((l) => l.split(',')[4]),
    ['1.5', '2.5'],
  )
  t.regex(lines[4], /^# requested_range=24h applied_from=\S+Z applied_to=\S+Z$/)
  t.is(lines[4].split(' ')[2], `applied_from=${res.headers.get('x-service-export-from')}`)
})

test('the download is named after the stat and the applied window, not export.csv', async (t) => {
  const { key } = await account()
  const one = await request(app.url, `/api/v1/stats/${encodeURIComponent('a counter')}/export?format=csv&range=24h`, { bearer: key })
  t.is(one.status, 200)
  const at = (h: string) => `${one.headers.get(h)!.slice(0, 16).replace(':', '')}Z`
  const name = `a counter_${at('x-service-export-from')}_${at('x-service-export-to')}.csv`
  t.is(
    one.headers.get('content-disposition'),
    `attachment; filename="${name.replace(' ', '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`,
  )
  const all = await request(app.url, '/api/v1/export?range=7d', { bearer: key })
  t.regex(
    all.headers.get('content-disposition') ?? '',
    /^attachment; filename="all-stats_\d{4}-\d{2}-\d{2}T\d{4}Z_\d{4}-\d{2}-\d{2}T\d{4}Z\.json"; filename\*=UTF-8''all-stats_/,
  )
})

test('4.5 a range longer than retention is clamped and the clamp is reported', async (t) => {
  const { key } = await account()
  const res = await request(app.url, '/api/v1/export?window=90d', { bearer: key })
  t.is(res.status, 200)
  t.is(res.body.requested_range, '90d')
  t.is(res.body.range_clamped_by_retention, true)
  t.is(res.headers.get('x-service-export-range-clamped'), 'true')
  t.true(Math.abs(Date.now() - 30 * DAY * 1000 - Date.parse(res.body.applied_from)) < 5000)
  t.deepEqual(
    res.body.stats[0].points.map((p: { value: number }) => p.value),
    [2],
  )
})

test('4.5 no range: all history within retention (the older point is cut, and the cut is reported); from/to is custom', async (t) => {
  const { key } = await account()
  const all = await request(app.url, '/api/v1/export', { bearer: key })
  t.is(all.body.requested_range, 'all')
  t.is(all.headers.get('x-service-export-requested-range'), 'all')
  t.is(all.body.range_clamped_by_retention, true)
  t.deepEqual(
    all.body.stats[0].points.map((p: { value: number }) => p.value),
    [2],
  )
  const from = new Date(Date.now() - 3 * 3600_000).toISOString()
  const custom = await request(app.url, `/api/v1/export?from=${from}`, { bearer: key })
  t.is(custom.body.requested_range, 'custom')
  t.is(custom.body.range_clamped_by_retention, false)
  t.is(custom.body.applied_from, from)
  const old = await request(app.url, `/api/v1/export?from=${new Date(Date.now() - 60 * DAY * 1000).toISOString()}`, { bearer: key })
  t.is(old.body.range_clamped_by_retention, true)
})

test('4.5 unknown, empty or repeated range, range with window, range with from: 400 naming the valid set, never all history', async (t) => {
  const { key } = await account()
  const valid = '1h, 6h, 24h, 7d, 30d, 90d, 180d'
  for (const q of ['range=2d', 'range=', 'window=forever', 'range=1h&range=6h', 'range=1h&window=1h']) {
    const res = await request(app.url, `/api/v1/export?${q}`, { bearer: key })
    t.is(res.status, 400, q)
    t.true(res.body.detail.endsWith(valid), `${q}: ${res.body.detail}`)
    t.is(res.headers.get('x-service-export-from'), null)
  }
  const combo = await request(app.url, '/api/v1/export?range=1h&from=2026-01-01', { bearer: key })
  t.is(combo.status, 400)
  t.is(combo.body.detail, 'range cannot be combined with from or to')
  const badFormat = await request(app.url, '/api/v1/export?format=xml', { bearer: key })
  t.is(badFormat.status, 400)
})

test('4.5 one stat: ?stat= on the all-stats route and the per-stat route are identical; an unknown name is 404', async (t) => {
  const { key } = await account()
  const a = await request(app.url, '/api/v1/export?stat=b.gauge&range=24h&format=csv', { bearer: key })
  const b = await request(app.url, '/api/v1/stats/b.gauge/export?range=24h&format=csv', { bearer: key })
  t.is(a.status, 200)
  t.is(a.text.split('\n').slice(0, -2).join('\n'), b.text.split('\n').slice(0, -2).join('\n'))
  t.is(a.text.split('\n').filter((l) => l.startsWith('b.gauge,')).length, 2)
  t.is((await request(app.url, '/api/v1/export?stat=nope', { bearer: key })).status, 404)
  t.is((await request(app.url, '/api/v1/stats/nope/export', { bearer: key })).status, 404)
})

test('4.5 an account with no stats exports an empty document, and credentials are required', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const res = await request(app.url, '/api/v1/export', { bearer: key })
  t.deepEqual(res.body.stats, [])
  t.is((await request(app.url, '/api/v1/export')).status, 401)
})

test('CSV quoting: fields with commas, quotes or line breaks are quoted (RFC 4180)', (t) => {
  t.is(csvField('plain name'), 'plain name')
  t.is(csvField('a,b'), '"a,b"')
  t.is(csvField('say "hi"'), '"say ""hi"""')
  t.is(csvField('two\nlines'), '"two\nlines"')
})

test('CSV rows carry names and tags in UTF-8, quoted where they must be, and values of every form as JSON writes them', async (t) => {
  // The CSV is written byte by byte into one buffer a page: names and tags outside ASCII, fields that need quoting,
  // and values whose text is long or unusual must come out as the string form of the row would.
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const n = now() - 600
  const values = [-999_999_999_999_999.9, 5e-324, 1e-7, 0.1 + 0.2, 123456789012.25, -42]
  const points = values.map((value, i) => ({ stat: 'café 日本 load', value, t: n + i, tags: { host: 'wéb "1",a' } }))
  const res = await request(app.url, '/api/v1/points', { bearer: key, json: { points } })
  t.is(res.status, 200, res.text)
  await settle(app)
  const csv = await request(app.url, '/api/v1/export?format=csv&range=1h', { bearer: key })
  t.is(csv.status, 200)
  const rows = csv.text.split('\n').filter((l) => l.startsWith('café'))
  t.deepEqual(
    rows,
    values.map((v, i) => `café 日本 load,gauge,${n + i},${new Date((n + i) * 1000).toISOString()},${v},"host=wéb ""1"",a"`),
  )
})
