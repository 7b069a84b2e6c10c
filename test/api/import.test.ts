import test from 'ava'
import { readFileSync } from 'node:fs'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { settle, setPointsUsedToday, stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const fixture = (name: string) => readFileSync(new URL(`../fixtures/predecessor/${name}`, import.meta.url), 'utf8')
const now = () => Math.floor(Date.now() / 1000)

async function account(plan?: string) {
  const user = await signUp(app.url)
  if (plan) await app.sql`update accounts set plan = ${plan} where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  return { user, key }
}

function upload(key: string, body: string | Buffer, query = '', headers: Record<string, string> = {}): Promise<Reply> {
  return request(app.url, `/api/v1/import/legacy${query}`, {
    method: 'POST',
    bearer: key,
    body: body as string,
    headers: { 'content-type': 'text/csv', ...headers },
  })
}

/** Polls the import until it is completed or failed. */
async function finished(key: string, id: string): Promise<Reply> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const res = await request(app.url, `/api/v1/import/legacy/${id}`, { bearer: key })
    if (res.status !== 200 || ['completed', 'failed'].includes(res.body.import.status) || Date.now() > deadline) return res
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function points(accountId: string, stat: string) {
  const rows = await app.sql<{ t: number; value: number }[]>`
    select extract(epoch from p.ts)::int as t, p.value from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p
    where s.account_id = ${accountId} and s.name = ${stat} order by p.ts, p.value`
  return rows.map((r) => [r.t, r.value])
}

async function imports(accountId: string): Promise<number> {
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from imports where account_id = ${accountId}`
  return n
}

test('4.6.2 predecessor export JSON (sample 1w3h): preview lists each stat with kind, points and new_stat, writing nothing', async (t) => {
  const { user, key } = await account()
  const res = await upload(key, fixture('export_data_1w3h.json'), '?dryRun=1', { 'content-type': 'application/json' })
  t.is(res.status, 200, res.text)
  t.is(res.body.dry_run, true)
  t.is(res.body.format, 'predecessor_json')
  t.deepEqual(
    res.body.stats.map((s: any) => [s.name, s.kind, s.points, s.new_stat]),
    [
      ['request time', 'gauge', 4, true],
      ['user created', 'gauge', 4, true],
    ],
  )
  t.is(res.body.points_total, 8)
  t.is(res.body.points_accepted, 8)
  t.is(res.body.points_trimmed, 0)
  t.deepEqual(res.body.errors, [])
  t.regex(res.body.warnings[0], /8 points are older than the free plan's 30-day retention/)
  t.deepEqual(await stored(app, user.accountId), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
  t.is(await imports(user.accountId), 0)
})

test("4.6.2 predecessor export JSON: the import stores every point, then progress reads completed with the preview's numbers", async (t) => {
  const { user, key } = await account()
  const file = fixture('export_data_1w3h.json')
  const preview = await upload(key, file, '?dryRun=1&kind=counter')
  const res = await upload(key, file, '?kind=counter')
  t.is(res.status, 202, res.text)
  t.is(res.body.import.status, 'queued')
  t.is(res.headers.get('location'), `/api/v1/import/legacy/${res.body.import.id}`)
  const done = await finished(key, res.body.import.id)
  t.is(done.body.import.status, 'completed', done.text)
  for (const f of ['points_total', 'points_accepted', 'points_trimmed', 'errors_count', 'stats'])
    t.deepEqual(done.body.import[f], preview.body[f], f)
  t.is(done.body.import.points_done, 8)
  t.is(done.body.import.progress, 100)
  t.truthy(done.body.import.started_at && done.body.import.finished_at)
  t.deepEqual(await points(user.accountId, 'user created'), [
    [1360861620, 3],
    [1360872420, 0],
    [1360883220, 19],
    [1360894020, 21],
  ])
  t.deepEqual(await points(user.accountId, 'request time'), [
    [1360861620, 2.159],
    [1360872420, 1.034],
    [1360883220, 3.222],
    [1360894020, 3.101],
  ])
  const kinds = await app.sql<{ kind: string }[]>`select distinct kind from stats where account_id = ${user.accountId}`
  t.deepEqual(
    kinds.map((k) => k.kind),
    ['counter'],
    '?kind= types new stats the file does not type',
  )
  t.is((await stored(app, user.accountId)).quotaUsed, 8, "imported points count against the day's allowance")
})

test('4.6.2 predecessor summary JSON and the {statlist, datasets} wrapper: kinds come from the statlist', async (t) => {
  const { key } = await account()
  const summary = await upload(key, fixture('export_data_summary_7d.json'), '?dryRun=1')
  t.is(summary.status, 200, summary.text)
  t.deepEqual(
    summary.body.stats.map((s: any) => [s.name, s.kind, s.points]),
    [['ZPM Levels', 'gauge', 7]],
  )
  const wrapped = JSON.stringify({
    statlist: JSON.parse(fixture('export_statlist.json')),
    datasets: JSON.parse(fixture('export_data_1w3h.json')),
  })
  const res = await upload(key, wrapped, '?dryRun=1&kind=gauge')
  t.is(res.status, 200, res.text)
  t.deepEqual(
    res.body.stats.map((s: any) => [s.name, s.kind]),
    [
      ['request time', 'counter'],
      ['user created', 'counter'],
    ],
  )
})

test("4.6.2 the command-line tool's capitalised JSON (Name, Kind, Points, Time, Value) imports with its kinds", async (t) => {
  const { user, key } = await account()
  const cli = JSON.parse(fixture('export_data_1w3h.json')).map((d: any, i: number) => ({
    Name: d.name,
    Timeframe: d.timeframe,
    Kind: i === 0 ? 'value' : 'counter',
    Points: d.points.map((p: any) => ({ Time: p.time, Value: p.value, Rcount: 1 })),
  }))
  const res = await upload(key, JSON.stringify(cli, null, 2))
  t.is(res.status, 202, res.text)
  t.is((await finished(key, res.body.import.id)).body.import.status, 'completed')
  const kinds = await app.sql<
    { name: string; kind: string }[]
  >`select name, kind from stats where account_id = ${user.accountId} order by name`
  t.deepEqual(
    kinds.map((k) => [k.name, k.kind]),
    [
      ['request time', 'gauge'],
      ['user created', 'counter'],
    ],
  )
  t.is((await points(user.accountId, 'user created')).length, 4)
})

test("4.6.2 the command-line tool's wide CSV has no year: every row is a line error naming the cause; with ISO or Unix times it imports", async (t) => {
  const { user, key } = await account()
  const res = await upload(key, fixture('reconstructed_stathat-cli_dataset.csv'), '?dryRun=1')
  t.is(res.status, 200, res.text)
  t.is(res.body.format, 'wide_csv')
  t.is(res.body.points_total, 8)
  t.is(res.body.points_accepted, 0)
  t.is(res.body.points_invalid, 8)
  t.deepEqual(
    res.body.errors.map((e: any) => e.line),
    [2, 3, 4, 5],
  )
  t.regex(res.body.errors[0].message, /^invalid timestamp: "Feb 14 17:07:00" has no year/)
  const fixed = 'Time,request time,user created\n2013-02-14T17:07:00Z,2.159,3\n1360872420,1.034,\n2013-02-14 23:07:00,3.222,19\n'
  const ok = await upload(key, fixed)
  t.is(ok.status, 202, ok.text)
  t.is(ok.body.import.points_accepted, 5, 'an empty cell is no point')
  await finished(key, ok.body.import.id)
  t.deepEqual(await points(user.accountId, 'request time'), [
    [1360861620, 2.159],
    [1360872420, 1.034],
    [1360883220, 3.222],
  ])
  t.deepEqual(await points(user.accountId, 'user created'), [
    [1360861620, 3],
    [1360883220, 19],
  ])
})

test('4.6.2 files that are not exports (stat list, alert list, an /ez batch, an empty file, an unknown CSV) are 400 saying what was expected; nothing stored', async (t) => {
  const { user, key } = await account()
  const cases: Array<[string, RegExp]> = [
    [fixture('export_statlist.json'), /stat list, which holds no data points/],
    [fixture('export_alerts_list.json'), /not datasets with "name" and "points"/],
    [fixture('ez_batch_request.json'), /without a "datasets" or "stats" array/],
    ['', /the file is empty/],
    ['  \n\n', /the file is empty/],
    ['a,b,c\n1,2,3\n', /CSV header "a,b,c"/],
    ['[{"name": "x", "points": [1, 2]', /invalid JSON/],
  ]
  for (const [body, message] of cases) {
    for (const query of ['', '?dryRun=1']) {
      const res = await upload(key, body, query)
      t.is(res.status, 400, body)
      t.regex(res.body.detail, message)
      if (!/empty|invalid JSON/.test(message.source)) t.regex(res.body.detail, /expected the predecessor's export JSON/)
    }
  }
  t.deepEqual(await stored(app, user.accountId), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
  t.is(await imports(user.accountId), 0)
})

/** Export rows without the trailing comment line (it names the window, which moves with the clock). */
const csvRows = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .filter((l) => !l.startsWith('#'))

test('4.6.2 round trip: export (CSV and JSON), delete the stats, import the export unchanged, export again: identical rows', async (t) => {
  const { user, key } = await account()
  const n = now()
  const written = await request(app.url, '/api/v1/points', {
    bearer: key,
    json: {
      points: [
        { stat: 'orders.eu', count: 2, t: n - 7200 },
        { stat: 'orders.eu', count: 2, t: n - 7200 },
        { stat: 'orders.eu', count: 0.5, t: n - 60 },
        { stat: 'temp c', value: -1.25e-7, t: n - 3600 },
        { stat: 'temp c', value: 21.5, t: n - 30 },
        { stat: 'Zugriffe über Web', value: 1e15, t: n - 10 },
      ],
    },
  })
  t.is(written.status, 200, written.text)
  await settle(app)
  for (const format of ['csv', 'json']) {
    const before = await request(app.url, `/api/v1/export?format=${format}&range=7d`, { bearer: key })
    t.is(before.status, 200)
    for (const s of ['orders.eu', 'temp c', 'Zugriffe über Web']) {
      t.is((await request(app.url, `/api/v1/stats/${encodeURIComponent(s)}`, { method: 'DELETE', bearer: key })).status, 204)
    }
    t.is((await stored(app, user.accountId)).points, 0)
    const res = await upload(key, before.text, '', { 'content-type': format === 'csv' ? 'text/csv' : 'application/json' })
    t.is(res.status, 202, res.text)
    t.is(res.body.import.format, format === 'csv' ? 'long_csv' : 'service_json')
    t.is(res.body.import.points_accepted, 6)
    t.is(res.body.import.errors_count, 0, JSON.stringify(res.body.import.errors))
    t.is((await finished(key, res.body.import.id)).body.import.status, 'completed')
    const after = await request(app.url, `/api/v1/export?format=${format}&range=7d`, { bearer: key })
    if (format === 'csv') t.deepEqual(csvRows(after.text), csvRows(before.text))
    else t.deepEqual(after.body.stats, before.body.stats)
    const kinds = await app.sql<
      { name: string; kind: string }[]
    >`select name, kind from stats where account_id = ${user.accountId} order by name`
    t.deepEqual(
      Object.fromEntries(kinds.map((k) => [k.name, k.kind])),
      { 'orders.eu': 'counter', 'temp c': 'gauge', 'Zugriffe über Web': 'gauge' },
      `${format}: kinds come back from the file`,
    )
  }
})

test('4.6.2 tags: an export (CSV tags column, JSON point tags) re-imports into the same series; a second import adds nothing', async (t) => {
  const { user, key } = await account()
  const n = now()
  const written = await request(app.url, '/api/v1/points', {
    bearer: key,
    json: {
      points: [
        { stat: 'requests', count: 1, t: n - 3600 },
        { stat: 'requests', count: 2, t: n - 3600, tags: { host: 'web1', region: 'eu' } },
        { stat: 'requests', count: 4, t: n - 60, tags: { host: 'web2' } },
        { stat: 'latency', value: 12.5, t: n - 30, tags: { host: 'web1' } },
      ],
    },
  })
  t.is(written.status, 200, written.text)
  await settle(app)
  const series = () =>
    app.sql<{ name: string; tags: Record<string, string> | null; points: number }[]>`
      select s.name, s.tags, (select count(*)::int from stat_points(s.id, '-infinity', 'infinity')) as points
      from stats s where s.account_id = ${user.accountId} order by s.name, s.tags::text nulls first`
  const original = await series()
  t.is(original.length, 5, 'two stats, three tagged series')
  for (const format of ['csv', 'json']) {
    const before = await request(app.url, `/api/v1/export?format=${format}&range=7d`, { bearer: key })
    t.is(before.status, 200)
    for (const s of ['requests', 'latency'])
      t.is((await request(app.url, `/api/v1/stats/${s}`, { method: 'DELETE', bearer: key })).status, 204)
    t.is((await stored(app, user.accountId)).points, 0)
    const type = { 'content-type': format === 'csv' ? 'text/csv' : 'application/json' }
    const preview = await upload(key, before.text, '?dryRun=true', type)
    t.is(preview.status, 200, preview.text)
    const listed = preview.body.stats
      .filter((s: { points: number }) => s.points)
      .map((s: { name: string; tags?: object; new_stat: boolean }) => JSON.stringify([s.name, s.tags ?? null, s.new_stat]))
    t.deepEqual(
      listed.sort(),
      original
        .map((s) => JSON.stringify([s.name, s.tags, true]))
        .filter((_, i) => original[i].points)
        .sort(),
      `${format}: the preview lists each series with points as new`,
    )
    const res = await upload(key, before.text, '', type)
    t.is(res.status, 202, res.text)
    t.is(res.body.import.points_accepted, 4)
    t.is(res.body.import.errors_count, 0, JSON.stringify(res.body.import.errors))
    t.is((await finished(key, res.body.import.id)).body.import.status, 'completed')
    t.deepEqual(await series(), original, `${format}: the same series hold the same points`)
    const after = await request(app.url, `/api/v1/export?format=${format}&range=7d`, { bearer: key })
    if (format === 'csv') t.deepEqual(csvRows(after.text), csvRows(before.text))
    else t.deepEqual(after.body.stats, before.body.stats)
    const again = await upload(key, before.text, '', type)
    t.is(again.status, 202, again.text)
    t.is(again.body.import.points_duplicate, 4, `${format}: a second import of the same file stores nothing twice`)
    await finished(key, again.body.import.id)
    t.deepEqual(await series(), original)
  }
})

test('4.6.2 tags: a bad tag set refuses the whole file naming its line (CSV and JSON, preview and import); nothing is stored', async (t) => {
  const { user, key } = await account()
  const n = now()
  const csv = `stat,kind,timestamp,value,tags\nrequests,counter,${n - 60},1,host=web1\nrequests,counter,${n - 50},1,Host=web1\n`
  const json = JSON.stringify(
    {
      stats: [
        {
          name: 'requests',
          kind: 'counter',
          points: [
            { t: n - 60, value: 1, tags: { host: 'web1' } },
            { t: n - 50, value: 1, tags: { host: 7 } },
          ],
        },
      ],
    },
    null,
    2,
  )
  // The line the bad point's tags start on (`"tags": {`, just above `"host": 7`).
  const jsonLine = json.split('\n').findIndex((l) => l.includes('"host": 7'))
  t.regex(json.split('\n')[jsonLine - 1], /"tags": \{/)
  for (const [body, type, line, why] of [
    [csv, 'text/csv', 3, 'invalid tag key "Host"'],
    [json, 'application/json', jsonLine, 'invalid tag "host": the value must be a string'],
  ] as const) {
    for (const query of ['?dryRun=true', '']) {
      const res = await upload(key, body, query, { 'content-type': type })
      t.is(res.status, 400, res.text)
      t.is(res.body.code, 'import_invalid_tags')
      t.true(res.body.detail.startsWith(`line ${line}: ${why}`), res.body.detail)
      t.true(res.body.detail.endsWith('nothing was imported'), res.body.detail)
    }
  }
  t.is(await imports(user.accountId), 0)
  const [{ stats }] = await app.sql<{ stats: number }[]>`select count(*)::int as stats from stats where account_id = ${user.accountId}`
  t.is(stats, 0)
  t.is((await stored(app, user.accountId)).points, 0)
})

test("4.6.2 line numbers: every bad line is listed with its number and the ingest path's message; good lines still import", async (t) => {
  const { user, key } = await account()
  const n = now()
  await request(app.url, '/api/v1/stats/hits/count', { bearer: key, json: { count: 1, t: n - 100 } })
  const csv = [
    'stat,kind,timestamp,value', // 1
    `hits,,${n - 50},2`, // 2 ok (existing counter)
    `hits,,${n - 40},0x10`, // 3 bad count (the stat is a counter)
    '', // 4 empty line: skipped
    `temp,gauge,${n - 30},abc`, // 5 bad value
    `temp,gauge,${n + 3600},1`, // 6 future
    `temp,gauge,${(n - 30) * 1000},1`, // 7 milliseconds
    `bad/name,gauge,${n - 30},1`, // 8 invalid name
    `temp,counter,${n - 20},1`, // 9 kind contradicts line 5's
    'temp,gauge', // 10 too few fields
    `temp,sideways,${n - 20},1`, // 11 unknown kind
    `"te""mp",gauge,${n - 20},4`, // 12 quoted name holding a quote: invalid name
    `temp,gauge,1999-12-31T23:59:59Z,1`, // 13 before 2000
    `temp,gauge,${n - 10},1e3`, // 14 ok
  ].join('\n')
  const res = await upload(key, csv, '?dryRun=1')
  t.is(res.status, 200, res.text)
  t.deepEqual(
    res.body.errors.map((e: any) => [e.line, e.message]),
    [
      [3, 'invalid count: not a number'],
      [5, 'invalid value: not a number'],
      [6, 'invalid timestamp: too far in the future'],
      [7, 'invalid timestamp: too far in the future'],
      [8, 'invalid stat name: contains invalid characters'],
      [9, 'type conflict: stat "temp" is a gauge earlier in this file, not a counter'],
      [10, 'line has 2 fields; the header has 4'],
      [11, 'invalid kind "sideways": must be counter or gauge'],
      [12, 'invalid stat name: contains invalid characters'],
      [13, 'invalid timestamp: before 2000-01-01 (is the client sending an uninitialised value?)'],
    ],
  )
  t.is(res.body.errors_count, 10)
  t.is(res.body.points_total, 12)
  t.is(res.body.points_invalid, 10)
  t.is(res.body.points_accepted, 2)
  const real = await upload(key, csv)
  await finished(key, real.body.import.id)
  t.deepEqual(await points(user.accountId, 'temp'), [[n - 10, 1000]])
  t.deepEqual(await points(user.accountId, 'hits'), [
    [n - 100, 1],
    [n - 50, 2],
  ])
  t.deepEqual((await finished(key, real.body.import.id)).body.import.errors, res.body.errors, 'the import keeps the same line errors')
})

test("4.6.2 line numbers in JSON: a bad point is reported on the line it starts; a kind contradicting the existing stat is one error on its dataset's line", async (t) => {
  const { key } = await account()
  await request(app.url, '/api/v1/stats/hits/count', { bearer: key, json: { count: 1 } })
  const json = [
    '[', // 1
    '  {"name": "load", "points": [', // 2
    '    {"time": 1360861620, "value": 1.5},', // 3
    '    {"time": 1360872420,', // 4
    '     "value": "NaN"},', // 5
    '    {"time": "yesterday", "value": 2},', // 6
    '    7', // 7
    '  ]},', // 8
    '  {"name": "hits", "kind": "value", "points": [{"time": 1360861620, "value": 3}]},', // 9
    '  {"name": "a&b", "points": [{"time": 1360861620, "value": 3}]}', // 10
    ']',
  ].join('\n')
  const res = await upload(key, json, '?dryRun=1')
  t.is(res.status, 200, res.text)
  t.deepEqual(
    res.body.errors.map((e: any) => [e.line, e.message]),
    [
      [4, 'invalid value: not a number'],
      // Says what is accepted (it read "not a number", though ISO 8601 times are taken too).
      [6, 'invalid timestamp: "yesterday" is neither Unix seconds nor an ISO 8601 time (1700000000 or 2023-11-14T22:13:20Z)'],
      [7, 'not a point: expected {"time": <unix seconds>, "value": <number>}'],
      [9, 'type conflict: stat "hits" is a counter; this file has it as a gauge (count, not value); its points are skipped'],
    ],
  )
  t.deepEqual(
    res.body.stats.map((s: any) => [s.name, s.points, s.points_accepted]),
    [
      ['load', 1, 1],
      ['hits', 0, 0],
      ['ab', 1, 1],
    ],
    '& is removed from names, as on writes',
  )
})

test("4.6.2 quotas: backfilling existing stats costs no stat quota; new stats beyond the plan's limit are trimmed with their points", async (t) => {
  const { user, key } = await account() // free: 10 stats
  const n = now()
  const ten = Array.from({ length: 10 }, (_, i) => ({ stat: `s${i}`, value: i, t: n - 3600 }))
  t.is((await request(app.url, '/api/v1/points', { bearer: key, json: { points: ten } })).status, 200)
  await settle(app)
  const csv = [
    'stat,value,time',
    `s3,1,${n - 100}`,
    `new one,1,${n - 100}`,
    `s3,2,${n - 90}`,
    `new two,5,${n - 80}`,
    `s9,3,${n - 70}`,
  ].join('\n')
  const res = await upload(key, csv, '?dryRun=1')
  t.is(res.status, 200, res.text)
  t.deepEqual(
    res.body.stats.map((s: any) => [s.name, s.new_stat, s.points_accepted, s.points_trimmed, s.trimmed_by]),
    [
      ['s3', false, 2, 0, null],
      ['new one', true, 0, 1, 'stat_limit'],
      ['new two', true, 0, 1, 'stat_limit'],
      ['s9', false, 1, 0, null],
    ],
  )
  t.is(res.body.points_accepted, 3)
  t.is(res.body.points_trimmed, 2)
  const real = await upload(key, csv)
  t.is(real.status, 202)
  t.is((await finished(key, real.body.import.id)).body.import.status, 'completed')
  const s = await stored(app, user.accountId)
  t.is(s.stats, 10, 'no stat created past the limit')
  t.is(s.points, 13)
  t.deepEqual(await points(user.accountId, 's3'), [
    [n - 3600, 3],
    [n - 100, 1],
    [n - 90, 2],
  ])
})

test("4.6.2 quotas: points beyond what is left of the day's allowance are trimmed in file order, and the allowance is taken", async (t) => {
  const { user, key } = await account() // free: 100,000 points a day
  await setPointsUsedToday(app, user.accountId, 99_996)
  const n = now()
  const csv = ['stat,value,time', ...Array.from({ length: 6 }, (_, i) => `g,${i},${n - 100 + i}`)].join('\n')
  const preview = await upload(key, csv, '?dryRun=1')
  t.is(preview.body.points_accepted, 4)
  t.is(preview.body.points_trimmed, 2)
  t.is(preview.body.stats[0].trimmed_by, 'daily_limit')
  t.is((await stored(app, user.accountId)).quotaUsed, 99_996, 'the preview takes nothing')
  const real = await upload(key, csv)
  t.is(real.body.import.points_accepted, 4)
  await finished(key, real.body.import.id)
  t.deepEqual(
    (await points(user.accountId, 'g')).map((p) => p[1]),
    [0, 1, 2, 3],
  )
  t.is((await stored(app, user.accountId)).quotaUsed, 100_000)
  const after = await upload(key, csv, '?dryRun=1')
  t.is(after.body.points_accepted, 0)
  t.is(after.body.points_duplicate, 4, 'the imported rows are known as imported')
  t.is(after.body.points_trimmed, 2)
})

/** Sends a body through fetch as given: a FormData (multipart), or a stream (chunked, no Content-Length). */
async function send(
  key: string,
  query: string,
  body: FormData | ReadableStream | string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await fetch(`${app.url}/api/v1/import/legacy${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...headers },
    body,
    duplex: 'half',
  } as RequestInit)
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text }
}

/** A CSV body of `total` bytes sent in chunks (no Content-Length): a header, then `line` over and over. */
function chunked(total: number, line = Buffer.from(`s,1,${now() - 60}\n`), chunk = 64 * 1024): ReadableStream {
  const header = Buffer.from('stat,value,time\n')
  const unit = Buffer.concat(Array(Math.ceil((chunk * 2) / line.length)).fill(line))
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close()
      const n = Math.min(chunk, total - sent)
      const buf =
        sent === 0 ? Buffer.concat([header, unit]).subarray(0, n) : unit.subarray((sent - header.length) % line.length).subarray(0, n)
      sent += n
      controller.enqueue(Buffer.from(buf))
    },
  })
}

test('8 a file over 8 MB is 413 whatever the transport (raw, chunked, multipart; with or without dryRun), and nothing is stored', async (t) => {
  const { user, key } = await account()
  const line = `s,1,${now() - 60}\n`
  const big = `stat,value,time\n${line.repeat(Math.ceil(8_000_001 / line.length))}`
  t.true(big.length > 8_000_000)
  for (const query of ['', '?dryRun=1']) {
    const replies = [
      await send(key, query, big, { 'content-type': 'text/csv' }),
      await send(key, query, chunked(8_000_001), { 'content-type': 'text/csv' }),
      await send(
        key,
        query,
        (() => {
          const f = new FormData()
          f.set('file', new Blob([big]), 'export.csv')
          return f
        })(),
      ),
    ]
    for (const res of replies) {
      t.is(res.status, 413, res.text)
      t.is(res.body.code, 'body_too_large')
      t.regex(res.body.detail, /at most 8,000,000 bytes/)
    }
  }
  t.deepEqual(await stored(app, user.accountId), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
  t.is(await imports(user.accountId), 0)
  // Exactly at the limit is accepted (counted while streaming, without a declared length); comment lines keep it quick to read.
  const atLimit = await send(key, '?dryRun=1', chunked(8_000_000, Buffer.from(`#${'x'.repeat(1000)}\n`)), { 'content-type': 'text/csv' })
  t.is(atLimit.status, 200, atLimit.text.slice(0, 300))
  t.is(atLimit.body.points_total, 0)
})

test('8 more than 500,000 points is 400 before anything is stored (preview and import)', async (t) => {
  const { user, key } = await account('business')
  const wide = (rows: number, extra: number) => {
    const cols = 100
    const lines = [`Time,${Array.from({ length: cols }, (_, i) => `c${i}`).join(',')}`]
    const cells = Array(cols).fill('1').join(',')
    for (let r = 0; r < rows; r++) lines.push(`${1_600_000_000 + r},${cells}`)
    if (extra) lines.push(`${1_600_000_000 + rows},${Array(extra).fill('2').join(',')}`)
    return lines.join('\n')
  }
  for (const query of ['?dryRun=1', '']) {
    const res = await upload(key, wide(5_000, 1), query)
    t.is(res.status, 400)
    t.is(res.body.code, 'import_too_many_points')
    t.regex(res.body.detail, /more than 500,000 points/)
  }
  t.deepEqual(await stored(app, user.accountId), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
  t.is(await imports(user.accountId), 0)
})

test('4.6.2 multipart/form-data: the file is read from field "file"; a body without it is 400', async (t) => {
  const { key } = await account()
  const form = new FormData()
  form.set('note', 'ignored')
  form.set('file', new Blob([fixture('export_data_1w3h.json')], { type: 'application/json' }), 'export.json')
  const res = await send(key, '?dryRun=1', form)
  t.is(res.status, 200, res.text)
  t.is(res.body.points_total, 8)
  const none = new FormData()
  none.set('upload', new Blob(['x']), 'x.csv')
  const missing = await send(key, '?dryRun=1', none)
  t.is(missing.status, 400)
  t.is(missing.body.detail, 'the multipart/form-data body has no field named "file"')
})

test("4.6.2 auth: Bearer or session; a session needs its CSRF header; another account's import id is 404", async (t) => {
  const { user, key } = await account()
  const file = fixture('export_data_summary_7d.json')
  t.is((await request(app.url, '/api/v1/import/legacy', { method: 'POST', body: file })).status, 401)
  const noCsrf = await request(app.url, '/api/v1/import/legacy?dryRun=1', {
    method: 'POST',
    body: file,
    session: { cookie: user.session.cookie },
  })
  t.is(noCsrf.status, 403)
  t.is(noCsrf.body.code, 'csrf_failed')
  const bySession = await request(app.url, '/api/v1/import/legacy', { method: 'POST', body: file, session: user.session })
  t.is(bySession.status, 202, bySession.text)
  const id = bySession.body.import.id
  t.is((await request(app.url, `/api/v1/import/legacy/${id}`, { session: user.session })).status, 200)
  const other = await account()
  const theirs = await request(app.url, `/api/v1/import/legacy/${id}`, { bearer: other.key })
  t.is(theirs.status, 404)
  t.is(theirs.body.code, 'import_not_found')
  t.is((await request(app.url, '/api/v1/import/legacy/not-a-uuid', { bearer: key })).status, 404)
  t.is((await upload(key, file, '?dryRun=maybe')).status, 400)
  t.is((await upload(key, file, '?kind=meter')).status, 400)
})

/** A long CSV of `n` points over two stats, one a second, recent. */
function longCsv(n: number, base = now() - n - 600): string {
  const lines = ['stat,value,timestamp']
  for (let i = 0; i < n; i++) lines.push(`${i % 2 ? 'odd' : 'even'},${i % 7},${base + i}`)
  return lines.join('\n')
}

async function pointCount(accountId: string): Promise<number> {
  return (await stored(app, accountId)).points
}

test('4.6.2 progress climbs from queued to completed; points_done never goes back', async (t) => {
  const { user, key } = await account('starter')
  const res = await upload(key, longCsv(25_000))
  t.is(res.status, 202, res.text)
  t.is(res.body.import.points_accepted, 25_000)
  const seen: Array<[string, number]> = []
  const deadline = Date.now() + 60_000
  for (;;) {
    const r = await request(app.url, `/api/v1/import/legacy/${res.body.import.id}`, { bearer: key })
    seen.push([r.body.import.status, r.body.import.points_done])
    if (r.body.import.status === 'completed' || Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const order = ['queued', 'running', 'completed']
  for (let i = 1; i < seen.length; i++) {
    t.true(order.indexOf(seen[i][0]) >= order.indexOf(seen[i - 1][0]), JSON.stringify(seen))
    t.true(seen[i][1] >= seen[i - 1][1], JSON.stringify(seen))
  }
  t.deepEqual(seen.at(-1), ['completed', 25_000])
  t.is(await pointCount(user.accountId), 25_000)
})

test('4.6.2 two imports of one file store nothing twice: one after the other (the second is all duplicates) or at the same time', async (t) => {
  const { user, key } = await account('starter')
  const file = longCsv(12_000)
  const first = await upload(key, file)
  await finished(key, first.body.import.id)
  const second = await upload(key, file)
  t.is(second.status, 202)
  t.is(second.body.import.points_accepted, 0)
  t.is(second.body.import.points_duplicate, 12_000)
  t.is(second.body.import.status, 'completed')
  t.is(await pointCount(user.accountId), 12_000)
  t.is((await stored(app, user.accountId)).quotaUsed, 12_000, 'duplicates take no allowance')

  const other = await account('starter')
  const fresh = longCsv(12_000)
  const [a, b] = await Promise.all([upload(other.key, fresh), upload(other.key, fresh)])
  t.is(a.status, 202)
  t.is(b.status, 202)
  const done = await Promise.all([finished(other.key, a.body.import.id), finished(other.key, b.body.import.id)])
  t.deepEqual(
    done.map((d) => d.body.import.status),
    ['completed', 'completed'],
  )
  t.is(await pointCount(other.user.accountId), 12_000)
  const accepted = done.reduce((n, d) => n + d.body.import.points_accepted, 0)
  const skipped = done.reduce((n, d) => n + d.body.import.points_skipped, 0)
  t.is(accepted - skipped, 12_000, 'what both accepted, less what the persist path found already stored, is what is stored')
})

test('4.6.2 an import holding the same observation twice stores it twice (observations are appended), and re-importing it adds nothing', async (t) => {
  const { user, key } = await account()
  const n = now() - 100
  const csv = `stat,value,timestamp\nc,1,${n}\nc,1,${n}\nc,2,${n}\n`
  await finished(key, (await upload(key, csv)).body.import.id)
  t.deepEqual(await points(user.accountId, 'c'), [
    [n, 1],
    [n, 1],
    [n, 2],
  ])
  const again = `stat,value,timestamp\nc,1,${n}\nc,1,${n}\nc,1,${n}\nc,2,${n}\n`
  const res = await upload(key, again, '?dryRun=1')
  t.is(res.body.points_duplicate, 3)
  t.is(res.body.points_accepted, 1, 'only the third copy of (c, n, 1) is new')
})

test("the OpenAPI document describes both import routes: the upload's media types, the preview, the 202, 413 and the progress record", async (t) => {
  const res = await request(app.url, '/api/v1/openapi.json')
  const post = res.body.paths['/api/v1/import/legacy'].post
  t.deepEqual(Object.keys(post.requestBody.content).sort(), ['application/json', 'multipart/form-data', 'text/csv'])
  t.regex(post.requestBody.content['text/csv'].schema.description, /8,000,000 bytes/)
  for (const status of ['200', '202', '400', '401', '403', '413', '429']) t.truthy(post.responses[status], status)
  t.deepEqual(post.parameters.map((p: any) => p.name).sort(), ['dryRun', 'kind'])
  const get = res.body.paths['/api/v1/import/legacy/{id}'].get
  t.truthy(get.responses['200'] && get.responses['404'])
})
