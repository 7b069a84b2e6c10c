// The /ez JSON batch (docs/decisions.md §I-4.1.3, §4 and §5).
import { readFileSync } from 'node:fs'
import test, { type ExecutionContext } from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { kindOf, pointsOf, setPointsUsedToday, settle, settledState, stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const STRICT = { 'x-service-strict': '1' }
const FREE_DAILY = 100_000
const DAILY_LIMIT_MSG = `plan limit reached: the free plan records at most ${FREE_DAILY} points per day`
const STAT_LIMIT_MSG = 'plan limit reached: the free plan tracks at most 10 stats'
const nowSeconds = () => Math.floor(Date.now() / 1000)

interface Item {
  stat?: unknown
  count?: unknown
  value?: unknown
  t?: unknown
  ikey?: unknown
}

// Sign-ups hash a password with scrypt (32 MiB, libuv threadpool). Dozens at once starve the
// threadpool that also resolves the database host name, and pool connects then time out, so
// this file's tests sign up one at a time (they still run concurrently after that).
let signUps: Promise<unknown> = Promise.resolve()
/** A fresh account with a key; the plan is set before the key's first use (the key cache holds the account). */
function keyed(plan = 'free'): Promise<{ user: User; key: string }> {
  const next = signUps.then(() => keyedNow(plan))
  signUps = next.catch(() => {})
  return next
}

async function keyedNow(plan: string): Promise<{ user: User; key: string }> {
  const user = await signUp(app.url)
  if (plan !== 'free') await app.sql`update accounts set plan = ${plan} where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  return { user, key }
}

const batch = (key: string, data: unknown, headers: Record<string, string> = {}, path = '/ez') =>
  request(app.url, path, { json: { ezkey: key, data }, headers })

const pointsOfStat = (accountId: string, stat: string) => pointsOf(app, accountId, stat)

// As a sorted multiset: points written without t in different seconds come back in time order.
const valuesOf = async (accountId: string, stat: string) => (await pointsOfStat(accountId, stat)).map((p) => p.value).sort((a, b) => a - b)

async function statNames(accountId: string): Promise<string[]> {
  return (await app.sql<{ name: string }[]>`select name from stats where account_id = ${accountId} order by name`).map((r) => r.name)
}

const kindOfStat = (accountId: string, stat: string) => kindOf(app, accountId, stat)

const snapshot = (accountId: string) => settledState(app, accountId)

/** Sends a batch that must be refused as a whole: status, exact envelope, nothing stored. */
async function refused(
  t: ExecutionContext,
  accountId: string,
  send: () => Promise<Reply>,
  status: number,
  msg: string | RegExp,
  label = '',
): Promise<Reply> {
  const before = await snapshot(accountId)
  const res = await send()
  t.is(res.status, status, `${label} status`)
  t.is(res.body?.status, 'error', label)
  if (typeof msg === 'string') t.is(res.body?.msg, msg, label)
  else t.regex(res.body?.msg ?? '', msg, label)
  t.deepEqual(Object.keys(res.body ?? {}).sort(), ['msg', 'status'], `${label}: no accepted count on a whole-batch refusal`)
  t.deepEqual(await snapshot(accountId), before, `${label} nothing stored`)
  return res
}

const setPointsUsed = (accountId: string, used: number) => setPointsUsedToday(app, accountId, used)

/** The predecessor's published sample (copied into test/fixtures/predecessor/). */
const SAMPLE = JSON.parse(readFileSync(new URL('../fixtures/predecessor/ez_batch_request.json', import.meta.url), 'utf8')) as {
  ezkey: string
  data: Item[]
}

// ============================================================ accepted batches

test('4.1.3 the predecessor sample ez_batch_request.json (names fixed to valid ones) is accepted: {"status":200,"msg":"ok","accepted":4}', async (t) => {
  const { user, key } = await keyed()
  const fix = (name: string) => name.replace(/[~,:]/g, ' ').replace(/ +/g, ' ')
  const body = { ...SAMPLE, ezkey: key, data: SAMPLE.data.map((d) => ({ ...d, stat: fix(String(d.stat)) })) }
  t.deepEqual(
    body.data.map((d) => d.stat),
    ['page view', 'messages sent total female europe', 'request time total messages', 'ws0 load average'],
  )
  const res = await request(app.url, '/ez', { json: body })
  t.is(res.status, 200)
  t.deepEqual(res.body, { status: 200, msg: 'ok', accepted: 4, duplicates: 0 })
  t.is(res.headers.get('access-control-allow-origin'), '*')
  t.deepEqual(await valuesOf(user.accountId, 'page view'), [2])
  t.deepEqual(await valuesOf(user.accountId, 'messages sent total female europe'), [1])
  t.deepEqual(await valuesOf(user.accountId, 'request time total messages'), [23.094])
  t.deepEqual(await pointsOfStat(user.accountId, 'ws0 load average'), [{ ts: 1363118126, value: 0.732 }])
  t.is(await kindOfStat(user.accountId, 'page view'), 'counter')
  t.is(await kindOfStat(user.accountId, 'request time total messages'), 'gauge')
  t.is((await stored(app, user.accountId)).quotaUsed, 4)
})

test('4.1.3 the predecessor sample as published (names with ~ , :) -> 400 naming data[1], nothing stored', async (t) => {
  const { user, key } = await keyed()
  for (const headers of [{}, STRICT]) {
    await refused(
      t,
      user.accountId,
      () => request(app.url, '/ez', { json: { ...SAMPLE, ezkey: key }, headers }),
      400,
      'data[1]: invalid stat name: contains invalid characters',
    )
  }
})

test('4.1.3 t sent as a digit string (as the sample does), as a number, or with a fraction (truncated)', async (t) => {
  const { user, key } = await keyed()
  const recent = nowSeconds() - 3600
  const res = await batch(key, [
    { stat: 'ts', count: 1, t: '1363118126' },
    { stat: 'ts', count: 2, t: String(recent) },
    { stat: 'ts', count: 3, t: recent + 1 },
    { stat: 'ts', count: 4, t: `${recent + 2}.9` },
    { stat: 'ts', count: 5, t: ' 1363118127 ' },
  ])
  t.deepEqual(res.body, { status: 200, msg: 'ok', accepted: 5, duplicates: 0 })
  t.deepEqual(await pointsOfStat(user.accountId, 'ts'), [
    { ts: 1363118126, value: 1 },
    { ts: 1363118127, value: 5 },
    { ts: recent, value: 2 },
    { ts: recent + 1, value: 3 },
    { ts: recent + 2, value: 4 },
  ])
})

test('4.1.3 a batch of 100 items is accepted and all are stored ("accepted": 100)', async (t) => {
  const { user, key } = await keyed()
  const base = nowSeconds() - 1000
  const data = Array.from({ length: 100 }, (_, i) =>
    i % 2 ? { stat: `gauge ${i % 5}`, value: i, t: base + i } : { stat: `counter ${i % 5}`, count: i, t: String(base + i) },
  )
  const res = await batch(key, data, {}, '/api/ez')
  t.is(res.status, 200)
  t.deepEqual(res.body, { status: 200, msg: 'ok', accepted: 100, duplicates: 0 })
  await settle(app)
  const s = await stored(app, user.accountId)
  t.is(s.points, 100)
  t.is(s.quotaUsed, 100)
  t.is(s.stats, 10)
  t.deepEqual(
    await pointsOfStat(user.accountId, 'counter 0'),
    Array.from({ length: 10 }, (_, j) => ({ ts: base + 10 * j, value: 10 * j })),
  )
  t.deepEqual(await valuesOf(user.accountId, 'gauge 1'), [1, 11, 21, 31, 41, 51, 61, 71, 81, 91])
})

test('4.1.3 a batch of 101 items -> 400, nothing stored', async (t) => {
  const { user, key } = await keyed()
  const data = Array.from({ length: 101 }, (_, i) => ({ stat: 'many', count: i }))
  for (const headers of [{}, STRICT]) await refused(t, user.accountId, () => batch(key, data, headers), 400, /100/)
  t.deepEqual(await statNames(user.accountId), [])
})

// ============================================================ whole-batch refusals

test('decisions 4: one malformed item anywhere -> 400 naming its index, and nothing of the batch is stored', async (t) => {
  const { user, key } = await keyed('pro')
  const good = (i: number): Item => ({ stat: `good ${i % 3}`, count: i + 1 })
  const withBad = (index: number, bad: Item, length = 6) => Array.from({ length }, (_, i) => (i === index ? bad : good(i)))
  const cases: Array<[string, unknown[], string]> = [
    ['bad number', withBad(3, { stat: 'x', count: 'abc' }), 'data[3]: invalid count: not a number'],
    ['bad number (JSON boolean)', withBad(2, { stat: 'x', value: true }), 'data[2]: invalid value: not a number'],
    ['bad number (hex)', withBad(5, { stat: 'x', count: '0x1A' }), 'data[5]: invalid count: not a number'],
    ['out of range', withBad(4, { stat: 'x', count: 1e16 }), 'data[4]: invalid count: out of range'],
    ['empty count', withBad(1, { stat: 'x', count: '' }), 'data[1]: invalid count: empty'],
    ['null value', withBad(1, { stat: 'x', value: null }), 'data[1]: invalid value: empty'],
    ['bad name first', withBad(0, { stat: 'a/b', count: 1 }), 'data[0]: invalid stat name: contains invalid characters'],
    ['bad t: future', withBad(3, { stat: 'x', count: 1, t: nowSeconds() + 3600 }), 'data[3]: invalid timestamp: too far in the future'],
    [
      'bad t: milliseconds, last of 100',
      withBad(99, { stat: 'x', count: 1, t: String(Date.now()) }, 100),
      'data[99]: invalid timestamp: too far in the future',
    ],
    ['bad t: not a number', withBad(2, { stat: 'x', count: 1, t: 'yesterday' }), 'data[2]: invalid timestamp: not a number'],
  ]
  for (const headers of [{}, STRICT]) {
    for (const [label, data, msg] of cases) await refused(t, user.accountId, () => batch(key, data, headers), 400, msg, label)
  }
  // The before-2000 message keeps its hint, behind the index.
  await refused(
    t,
    user.accountId,
    () => batch(key, withBad(1, { stat: 'x', count: 1, t: 0 })),
    400,
    /^data\[1\]: invalid timestamp: before 2000-01-01 .*uninitiali[sz]ed/,
  )
  t.deepEqual(await statNames(user.accountId), [])
})

test('decisions 4: a kind conflict within the batch or against an existing stat -> 400 naming the index, nothing of the batch stored', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await request(app.url, '/ez', { form: `ezkey=${key}&stat=existing+counter&count=1` })).body, { status: 200, msg: 'ok' })
  t.deepEqual((await request(app.url, '/v', { form: `ukey=${key}&key=existing+gauge&value=1` })).body, { status: 200, msg: 'ok' })
  for (const headers of [{}, STRICT]) {
    await refused(
      t,
      user.accountId,
      () =>
        batch(
          key,
          [
            { stat: 'fresh', count: 1 },
            { stat: 'other', value: 2 },
            { stat: 'fresh', value: 3 },
          ],
          headers,
        ),
      400,
      /^data\[2\]: type conflict: stat "fresh" is a counter/,
      'within the batch',
    )
    await refused(
      t,
      user.accountId,
      () =>
        batch(
          key,
          [
            { stat: 'fresh', count: 1 },
            { stat: 'existing counter', count: 1 },
            { stat: 'a', count: 1 },
            { stat: 'b', count: 1 },
            { stat: 'existing counter', value: 2 },
          ],
          headers,
        ),
      400,
      /^data\[4\]: type conflict: stat "existing counter" is a counter/,
      'against an existing counter',
    )
    await refused(
      t,
      user.accountId,
      () => batch(key, [{ stat: 'existing gauge', value: 1 }, { stat: 'existing gauge' }], headers),
      400,
      /^data\[1\]: type conflict: stat "existing gauge" is a gauge/,
      'default count against an existing gauge',
    )
  }
  t.deepEqual(await statNames(user.accountId), ['existing counter', 'existing gauge'])
  t.deepEqual(await valuesOf(user.accountId, 'existing counter'), [1])
})

test('4.1.3 a bad or missing key refuses the batch: 200 invalid ezkey by default, 401 strict; data that is not an array or items that are not objects -> 400', async (t) => {
  const { user, key } = await keyed()
  const data = [{ stat: 'k', count: 1 }]
  await refused(t, user.accountId, () => batch('not-a-key', data), 200, 'invalid ezkey')
  await refused(t, user.accountId, () => batch('not-a-key', data, STRICT), 401, 'invalid ezkey', 'strict')
  await refused(t, user.accountId, () => request(app.url, '/ez', { json: { data } }), 200, 'missing required parameter', 'no ezkey')
  await refused(
    t,
    user.accountId,
    () => request(app.url, '/ez', { json: { data }, headers: STRICT }),
    401,
    'missing required parameter',
    'no ezkey, strict',
  )
  await refused(t, user.accountId, () => batch(key, { stat: 'k', count: 1 }), 400, /^invalid data/, 'data is an object')
  await refused(t, user.accountId, () => batch(key, 'k'), 400, /^invalid data/, 'data is a string')
  await refused(t, user.accountId, () => batch(key, [{ stat: 'k', count: 1 }, 5]), 400, /^data\[1\]: /, 'item is a number')
  await refused(t, user.accountId, () => batch(key, [{ stat: 'k', count: 1 }, null]), 400, /^data\[1\]: /, 'item is null')
  await refused(t, user.accountId, () => batch(key, [{ stat: 'k', count: 1 }, { count: 1 }]), 400, /^data\[1\]: /, 'item without stat')
})

// ============================================================ idempotency and replay

test('4.1.3 resending a batch with t and ikey on every item does not double-count, and says so in duplicates', async (t) => {
  const { user, key } = await keyed()
  const base = nowSeconds() - 500
  const data = Array.from({ length: 6 }, (_, i) => ({
    stat: i % 2 ? 'orders' : 'latency',
    ...(i % 2 ? { count: i } : { value: i / 10 }),
    t: String(base + i),
    ikey: `item-${i}`,
  }))
  const first = await batch(key, data)
  t.deepEqual(first.body, { status: 200, msg: 'ok', accepted: 6, duplicates: 0 })
  const afterFirst = await snapshot(user.accountId)
  t.is(afterFirst.points, 6)
  const second = await batch(key, data)
  t.is(second.status, 200)
  t.is(second.body.status, 200)
  t.false('replay' in second.body, 'batch responses carry no replay')
  t.is(second.body.accepted, 6)
  t.is(second.body.duplicates, 6, 'the answer says every item was a duplicate')
  const third = await batch(key, data, {}, '/api/ez')
  t.is(third.body.status, 200)
  const afterRetries = await snapshot(user.accountId)
  t.is(afterRetries.points, 6, 'no double count')
  t.is(afterRetries.stats, 2)
  t.deepEqual(await pointsOfStat(user.accountId, 'orders'), [
    { ts: base + 1, value: 1 },
    { ts: base + 3, value: 3 },
    { ts: base + 5, value: 5 },
  ])
  // docs/decisions.md §I-4.1.4: a retried JSON batch reserves its daily allowance per item again.
  t.is(afterRetries.quotaUsed, 18)
})

test('4.1.3 batch responses carry no replay field, even when an item repeats an explicit t that already holds a point', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 120
  t.deepEqual((await request(app.url, '/c', { form: `ukey=${key}&key=dup` })).body, { status: 200, msg: 'ok' })
  t.deepEqual((await request(app.url, '/c', { form: `ukey=${key}&key=dup&count=1&t=${ts}` })).body, { status: 200, msg: 'ok' })
  await settle(app)
  // The same single write would be disclosed (sums_with_existing); a batch never is.
  t.deepEqual((await batch(key, [{ stat: 'dup', count: 2, t: ts }])).body, { status: 200, msg: 'ok', accepted: 1, duplicates: 0 })
  t.deepEqual(
    (
      await batch(key, [
        { stat: 'dup', count: 3, t: ts },
        { stat: 'dup', count: 4, t: ts },
      ])
    ).body,
    { status: 200, msg: 'ok', accepted: 2, duplicates: 0 },
  )
  t.deepEqual(
    (await pointsOfStat(user.accountId, 'dup')).filter((p) => p.ts === ts).map((p) => p.value),
    [1, 2, 3, 4],
    'append-only: every observation kept',
  )
})

// ============================================================ quota stops part-way

test('decisions 4: a daily-quota stop part-way -> {"status":"error","msg":...,"accepted":k} with HTTP 200 by default; exactly the first k items stored', async (t) => {
  const { user, key } = await keyed()
  await setPointsUsed(user.accountId, FREE_DAILY - 3)
  const data = Array.from({ length: 6 }, (_, i) => ({ stat: `q${i}`, count: 10 + i }))
  const res = await batch(key, data)
  t.is(res.status, 200)
  t.deepEqual(res.body, { status: 'error', msg: DAILY_LIMIT_MSG, accepted: 3 })
  t.is(res.headers.get('access-control-allow-origin'), '*')
  t.deepEqual(await statNames(user.accountId), ['q0', 'q1', 'q2'])
  for (let i = 0; i < 3; i++) t.deepEqual(await valuesOf(user.accountId, `q${i}`), [10 + i])
  const s = await stored(app, user.accountId)
  t.is(s.points, 3)
  t.is(s.quotaUsed, FREE_DAILY)
  // Nothing fits any more: accepted 0, nothing stored.
  const before = await snapshot(user.accountId)
  const full = await batch(key, data)
  t.is(full.status, 200)
  t.deepEqual(full.body, { status: 'error', msg: DAILY_LIMIT_MSG, accepted: 0 })
  t.deepEqual(await snapshot(user.accountId), before)
})

test('decisions 4: a daily-quota stop part-way in strict mode -> 429 with the same body; exactly the first k items stored', async (t) => {
  const { user, key } = await keyed()
  await setPointsUsed(user.accountId, FREE_DAILY - 2)
  const base = nowSeconds() - 50
  const data = Array.from({ length: 5 }, (_, i) => ({ stat: 'strict quota', value: i + 0.5, t: base + i }))
  const res = await batch(key, data, STRICT)
  t.is(res.status, 429)
  t.deepEqual(res.body, { status: 'error', msg: DAILY_LIMIT_MSG, accepted: 2 })
  t.deepEqual(await pointsOfStat(user.accountId, 'strict quota'), [
    { ts: base, value: 0.5 },
    { ts: base + 1, value: 1.5 },
  ])
  t.is((await stored(app, user.accountId)).quotaUsed, FREE_DAILY)
})

test('decisions 4: a stat-limit stop part-way (free plan: 10 stats) -> accepted up to the item that needed an 11th stat; later items not stored', async (t) => {
  const { user, key } = await keyed()
  for (let i = 1; i <= 9; i++)
    t.deepEqual((await request(app.url, '/ez', { form: `ezkey=${key}&stat=s${i}&count=1` })).body, { status: 200, msg: 'ok' })
  const data = [
    { stat: 's1', count: 5 },
    { stat: 'tenth', count: 6 },
    { stat: 's2', count: 7 },
    { stat: 'eleventh', count: 8 },
    { stat: 's3', count: 9 },
    { stat: 'tenth', count: 10 },
  ]
  const res = await batch(key, data)
  t.is(res.status, 200)
  t.deepEqual(res.body, { status: 'error', msg: STAT_LIMIT_MSG, accepted: 3 })
  t.deepEqual(await valuesOf(user.accountId, 's1'), [1, 5])
  t.deepEqual(await valuesOf(user.accountId, 'tenth'), [6])
  t.deepEqual(await valuesOf(user.accountId, 's2'), [1, 7])
  t.deepEqual(await valuesOf(user.accountId, 's3'), [1], 'items after the stop are not stored')
  t.is(await kindOfStat(user.accountId, 'eleventh'), undefined)
  const s = await stored(app, user.accountId)
  t.is(s.stats, 10)
  t.is(s.points, 12)
  t.is(s.quotaUsed, 12, 'allowance taken only for what was stored')
})

test('decisions 4: a stat-limit stop part-way in strict mode -> 429; a stop at the first item -> accepted 0 and nothing stored', async (t) => {
  const { user, key } = await keyed()
  for (let i = 1; i <= 10; i++)
    t.deepEqual((await request(app.url, '/ez', { form: `ezkey=${key}&stat=s${i}&count=1` })).body, { status: 200, msg: 'ok' })
  const partly = await batch(
    key,
    [
      { stat: 's1', count: 2 },
      { stat: 'eleventh', count: 3 },
    ],
    STRICT,
  )
  t.is(partly.status, 429)
  t.deepEqual(partly.body, { status: 'error', msg: STAT_LIMIT_MSG, accepted: 1 })
  t.deepEqual(await valuesOf(user.accountId, 's1'), [1, 2])
  const before = await snapshot(user.accountId)
  const none = await batch(key, [
    { stat: 'eleventh', count: 3 },
    { stat: 's1', count: 4 },
  ])
  t.is(none.status, 200)
  t.deepEqual(none.body, { status: 'error', msg: STAT_LIMIT_MSG, accepted: 0 })
  t.deepEqual(await snapshot(user.accountId), before)
})
