// The legacy single-point routes /ez, /c, /v (docs/decisions.md §I-4.1, §I-5, §I-7, §I-8;
// docs/decisions.md §4, §4a), including replays of real predecessor-client captures.
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import test, { type ExecutionContext } from 'ava'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp, type User } from '../helpers/factories.js'
import { request, type Reply } from '../helpers/http.js'
import { kindOf, pointsOf, setPointsUsedToday, settle, settledState, stored } from '../helpers/storage.js'

const app = appSuite({ workers: true })

const OK = { status: 200, msg: 'ok' }
const STRICT = { 'x-service-strict': '1' }
const MISSING = 'missing required parameter'
const NOT_A_NUMBER = 'invalid count: not a number'
const OUT_OF_RANGE = 'invalid count: out of range'
const FUTURE = 'invalid timestamp: too far in the future'
const BAD_NAME = 'invalid stat name: contains invalid characters'
const enc = encodeURIComponent
const nowSeconds = () => Math.floor(Date.now() / 1000)

interface Keyed {
  user: User
  key: string
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

async function keyedNow(plan: string): Promise<Keyed> {
  const user = await signUp(app.url)
  if (plan !== 'free') await app.sql`update accounts set plan = ${plan} where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  return { user, key }
}

const post = (path: string, form: string, headers: Record<string, string> = {}) => request(app.url, path, { form, headers })
const get = (path: string, headers: Record<string, string> = {}) => request(app.url, path, { headers })

const pointsOfStat = (accountId: string, stat: string) => pointsOf(app, accountId, stat)

// As a sorted multiset: points written without t in different seconds come back in time order.
const valuesOf = async (accountId: string, stat: string) => (await pointsOfStat(accountId, stat)).map((p) => p.value).sort((a, b) => a - b)

const kindOfStat = (accountId: string, stat: string) => kindOf(app, accountId, stat)

const snapshot = (accountId: string) => settledState(app, accountId)

/** Sends a request that must be refused: checks the status, the exact envelope and that nothing was stored. */
async function refused(
  t: ExecutionContext,
  accountId: string,
  send: () => Promise<Reply>,
  status: number,
  msg: string,
  label = '',
): Promise<Reply> {
  const before = await snapshot(accountId)
  const res = await send()
  t.is(res.status, status, `${label} status`)
  t.deepEqual(res.body, { status: 'error', msg }, `${label} body`)
  t.deepEqual(await snapshot(accountId), before, `${label} nothing stored`)
  return res
}

// ---------------------------------------------------------------- raw HTTP

interface RawReply {
  status: number
  headers: Record<string, string>
  text: string
  body: any
}

/** Sends bytes as they are on a new connection and reads the first response (Content-Length framed, or until close). */
function rawHttp(data: Buffer | string): Promise<RawReply> {
  const { hostname, port } = new URL(app.url)
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname)
    let buf = Buffer.alloc(0)
    let done = false
    const parse = (final: boolean) => {
      if (done) return
      const end = buf.indexOf('\r\n\r\n')
      if (end < 0) return final && reject(new Error(`no response: ${buf.toString('latin1')}`))
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n')
      const headers: Record<string, string> = {}
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).trim().toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
      const len = headers['content-length'] === undefined ? undefined : Number(headers['content-length'])
      if (len === undefined ? !final : buf.length - end - 4 < len) return
      const text = buf.subarray(end + 4, len === undefined ? undefined : end + 4 + len).toString('utf8')
      let body: any = text
      try {
        body = JSON.parse(text)
      } catch {}
      done = true
      sock.destroy()
      resolve({ status: Number(lines[0].split(' ')[1]), headers, text, body })
    }
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      parse(false)
    })
    sock.on('end', () => parse(true))
    sock.on('close', () => parse(true))
    sock.on('error', (err) => (done ? undefined : buf.length ? parse(true) : reject(err)))
    sock.write(data)
  })
}

/** The requests of a capture file (copied from the predecessor samples into test/fixtures): head (CRLF lines) and body bytes. */
function captured(file: string): Array<{ head: string; body: string }> {
  const text = readFileSync(new URL(`../fixtures/predecessor/${file}`, import.meta.url), 'utf8')
  return text
    .split(/^----- request \d+ .*-----\n/m)
    .slice(1)
    .map((part) => {
      const sep = part.indexOf('\r\n\r\n')
      return { head: part.slice(0, sep), body: part.slice(sep + 4).split('\n')[0] }
    })
}

/**
 * Replays a captured request with substitutions in its body. The declared
 * Content-Length moves by the change in byte length, so a capture whose
 * length was wrong stays wrong by the same amount (unless `fixLength`).
 */
function replay(req: { head: string; body: string }, subs: Array<[string, string]>, opts: { fixLength?: boolean } = {}): Promise<RawReply> {
  let body = req.body
  for (const [from, to] of subs) body = body.replaceAll(from, to)
  const head = req.head.replace(
    /^(content-length):\s*(\d+)$/im,
    (_, name: string, n: string) =>
      `${name}: ${opts.fixLength ? Buffer.byteLength(body) : Number(n) + Buffer.byteLength(body) - Buffer.byteLength(req.body)}`,
  )
  return rawHttp(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), Buffer.from(body, 'utf8')]))
}

// ============================================================ 4.1.1 /ez

test('4.1.1 /ez form POST records one counter point; 4.1.4 success is HTTP 200 {"status":200,"msg":"ok"}', async (t) => {
  const { user, key } = await keyed()
  const res = await post('/ez', `ezkey=${key}&stat=signups&count=3`)
  t.is(res.status, 200)
  t.deepEqual(res.body, OK)
  t.is(typeof res.body.status, 'number', 'status is the integer 200')
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/)
  t.deepEqual(await valuesOf(user.accountId, 'signups'), [3])
  t.is(await kindOfStat(user.accountId, 'signups'), 'counter')
})

test('4.1 /ez GET with the query string records one point', async (t) => {
  const { user, key } = await keyed()
  const res = await get(`/ez?ezkey=${key}&stat=page+views&count=2`)
  t.is(res.status, 200)
  t.deepEqual(res.body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'page views'), [2])
})

test('4.1 /ez JSON single body records one point (count and value, numbers and decimal strings alike)', async (t) => {
  const { user, key } = await keyed()
  for (const json of [
    { ezkey: key, stat: 'jobs', count: 4 },
    { ezkey: key, stat: 'jobs', count: '5' },
    { ezkey: key, stat: 'load', value: 0.75 },
    { ezkey: key, stat: 'load', value: ' 1.25 ' },
  ]) {
    const res = await request(app.url, '/ez', { json })
    t.is(res.status, 200, JSON.stringify(json))
    t.deepEqual(res.body, OK)
  }
  t.deepEqual(await valuesOf(user.accountId, 'jobs'), [4, 5])
  t.deepEqual(await valuesOf(user.accountId, 'load'), [0.75, 1.25])
  t.is(await kindOfStat(user.accountId, 'jobs'), 'counter')
  t.is(await kindOfStat(user.accountId, 'load'), 'gauge')
})

test('1/4.1.1 a value written to /ez creates a gauge, a count a counter', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=temperature&value=21.5`)).body, OK)
  t.deepEqual((await get(`/ez?ezkey=${key}&stat=humidity&value=40`)).body, OK)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=clicks&count=1`)).body, OK)
  t.is(await kindOfStat(user.accountId, 'temperature'), 'gauge')
  t.is(await kindOfStat(user.accountId, 'humidity'), 'gauge')
  t.is(await kindOfStat(user.accountId, 'clicks'), 'counter')
  t.deepEqual(await valuesOf(user.accountId, 'temperature'), [21.5])
})

test('4.1.1/4.1.2 when both count and value are omitted, 1 is recorded as a counter increment on /ez and /c', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=hits`)).body, OK)
  t.deepEqual((await get(`/ez?ezkey=${key}&stat=hits`)).body, OK)
  t.deepEqual((await request(app.url, '/ez', { json: { ezkey: key, stat: 'hits' } })).body, OK)
  t.deepEqual((await post('/c', `ukey=${key}&key=visits`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'hits'), [1, 1, 1])
  t.deepEqual(await valuesOf(user.accountId, 'visits'), [1])
  t.is(await kindOfStat(user.accountId, 'hits'), 'counter')
  t.is(await kindOfStat(user.accountId, 'visits'), 'counter')
})

test('4.1.1 count or value present but empty (empty string, whitespace only, JSON "" or null) -> 400, nothing stored', async (t) => {
  const { user, key } = await keyed()
  const cases: Array<[string, () => Promise<Reply>, string]> = [
    ['form count=', () => post('/ez', `ezkey=${key}&stat=e&count=`), 'invalid count: empty'],
    ['form count=%20%20', () => post('/ez', `ezkey=${key}&stat=e&count=%20%20`), 'invalid count: empty'],
    ['form count=+ (a space)', () => post('/ez', `ezkey=${key}&stat=e&count=+`), 'invalid count: empty'],
    ['form count=%09', () => post('/ez', `ezkey=${key}&stat=e&count=%09`), 'invalid count: empty'],
    ['form value=', () => post('/ez', `ezkey=${key}&stat=e&value=`), 'invalid value: empty'],
    ['GET count=', () => get(`/ez?ezkey=${key}&stat=e&count=`), 'invalid count: empty'],
    ['JSON count ""', () => request(app.url, '/ez', { json: { ezkey: key, stat: 'e', count: '' } }), 'invalid count: empty'],
    ['JSON count "  "', () => request(app.url, '/ez', { json: { ezkey: key, stat: 'e', count: '  ' } }), 'invalid count: empty'],
    ['JSON count null', () => request(app.url, '/ez', { json: { ezkey: key, stat: 'e', count: null } }), 'invalid count: empty'],
    ['JSON value ""', () => request(app.url, '/ez', { json: { ezkey: key, stat: 'e', value: '' } }), 'invalid value: empty'],
    ['JSON value null', () => request(app.url, '/ez', { json: { ezkey: key, stat: 'e', value: null } }), 'invalid value: empty'],
    ['/c count=', () => post('/c', `ukey=${key}&key=e&count=`), 'invalid count: empty'],
    ['/v value=', () => post('/v', `ukey=${key}&key=e&value=`), 'invalid value: empty'],
    ['/v value=%20', () => post('/v', `ukey=${key}&key=e&value=%20`), 'invalid value: empty'],
  ]
  for (const [label, send, msg] of cases) await refused(t, user.accountId, send, 400, msg, label)
  t.is((await stored(app, user.accountId)).stats, 0, 'no stat created')
})

test('2.2 count=0 stores 0 (not a default of 1, not nothing)', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=zeros&count=0`)).body, OK)
  t.deepEqual((await post('/c', `ukey=${key}&key=zeros&count=0.0`)).body, OK)
  t.deepEqual((await request(app.url, '/ez', { json: { ezkey: key, stat: 'zeros', count: 0 } })).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'zeros'), [0, 0, 0])
})

test('4.1.1/5.1 email is an accepted alias of ezkey (/ez) and of ukey (/c, /v)', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `email=${key}&stat=via+email&count=2`)).body, OK)
  t.deepEqual((await get(`/ez?email=${key}&stat=via+email&count=3`)).body, OK)
  t.deepEqual((await request(app.url, '/ez', { json: { email: key, stat: 'via email', count: 4 } })).body, OK)
  t.deepEqual((await post('/c', `email=${key}&key=via+email&count=5`)).body, OK)
  t.deepEqual((await post('/v', `email=${key}&key=gauge+via+email&value=6`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'via email'), [2, 3, 4, 5])
  t.deepEqual(await valuesOf(user.accountId, 'gauge via email'), [6])
  // The alias is checked like the key itself.
  await refused(t, user.accountId, () => post('/c', 'email=not-a-key&key=x&count=1'), 200, 'invalid ukey')
})

// ============================================================ 4.1.2 /c and /v

test('4.1.2 /c records a counter and /v a gauge, with ukey and key (the stat name, not a credential)', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/c', `ukey=${key}&key=orders&count=7`)).body, OK)
  t.deepEqual((await post('/v', `ukey=${key}&key=queue+depth&value=12.5`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'orders'), [7])
  t.deepEqual(await valuesOf(user.accountId, 'queue depth'), [12.5])
  t.is(await kindOfStat(user.accountId, 'orders'), 'counter')
  t.is(await kindOfStat(user.accountId, 'queue depth'), 'gauge')
})

test('4.1.2 /v without value -> 400 invalid value: missing (no default for a gauge), nothing stored', async (t) => {
  const { user, key } = await keyed()
  for (const headers of [{}, STRICT]) {
    await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=g`, headers), 400, 'invalid value: missing')
    await refused(
      t,
      user.accountId,
      () => post('/v', `ukey=${key}&key=g&count=3`, headers),
      400,
      'invalid value: missing',
      'count is not a value',
    )
    await refused(t, user.accountId, () => post('/api/v', `ukey=${key}&key=g`, headers), 400, 'invalid value: missing', '/api/v')
  }
})

test('4.1.2 /c and /v take POST only: GET is 405 and stores nothing', async (t) => {
  const { user, key } = await keyed()
  const before = await snapshot(user.accountId)
  for (const path of ['/c', '/v', '/api/c', '/api/v']) {
    const res = await get(`${path}?ukey=${key}&key=x&count=1&value=1`)
    t.is(res.status, 405, path)
  }
  t.deepEqual(await snapshot(user.accountId), before)
})

test('decisions 4a: /api/ez, /api/c and /api/v are aliases of /ez, /c and /v', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/api/ez', `ezkey=${key}&stat=aliased&count=1`)).body, OK)
  t.deepEqual((await get(`/api/ez?ezkey=${key}&stat=aliased&count=2`)).body, OK)
  t.deepEqual((await request(app.url, '/api/ez', { json: { ezkey: key, stat: 'aliased', count: 3 } })).body, OK)
  t.deepEqual((await post('/api/c', `ukey=${key}&key=aliased&count=4`)).body, OK)
  t.deepEqual((await post('/api/v', `ukey=${key}&key=aliased+gauge&value=5`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'aliased'), [1, 2, 3, 4])
  t.deepEqual(await valuesOf(user.accountId, 'aliased gauge'), [5])
  // The aliases follow the same rules: bad key, malformed input.
  await refused(t, user.accountId, () => post('/api/ez', 'ezkey=nope&stat=x', STRICT), 401, 'invalid ezkey')
  await refused(t, user.accountId, () => post('/api/c', `ukey=${key}&key=aliased&count=abc`), 400, NOT_A_NUMBER)
})

test('4.1.2 mixed parameter names (/c or /v with ezkey+stat, /ez with ukey+key) -> missing-required-parameter error that does not say which', async (t) => {
  const { user, key } = await keyed()
  // The account key is missing under the route's own name: the key rule (200 by default, 401 strict).
  for (const [path, form] of [
    ['/c', `ezkey=${key}&stat=mixed&count=1`],
    ['/v', `ezkey=${key}&stat=mixed&value=1`],
    ['/ez', `ukey=${key}&key=mixed&count=1`],
    ['/api/c', `ezkey=${key}&stat=mixed`],
  ]) {
    const res = await refused(t, user.accountId, () => post(path, form), 200, MISSING, `${path} ${form.split('=')[0]}`)
    t.false(/ezkey|ukey|stat|key\b/.test(res.body.msg), 'does not say which')
    await refused(t, user.accountId, () => post(path, form, STRICT), 401, MISSING, `${path} strict`)
  }
  // The key is right but the stat field has the other route's name: malformed input (400 in both modes).
  for (const [path, form] of [
    ['/c', `ukey=${key}&stat=mixed&count=1`],
    ['/v', `ukey=${key}&stat=mixed&value=1`],
    ['/ez', `ezkey=${key}&key=mixed&count=1`],
  ]) {
    await refused(t, user.accountId, () => post(path, form), 400, MISSING, `${path} stat field`)
    await refused(t, user.accountId, () => post(path, form, STRICT), 400, MISSING, `${path} stat field strict`)
  }
  t.is(await kindOfStat(user.accountId, 'mixed'), undefined)
})

// ============================================================ 4.1.4 envelope, 5 auth

test('4.1.4 bad key -> 200 {"status":"error","msg":"invalid ezkey"} by default (invalid ukey on /c, /v), nothing stored', async (t) => {
  const { user, key } = await keyed()
  const wrong = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  await refused(t, user.accountId, () => post('/ez', `ezkey=${wrong}&stat=x&count=1`), 200, 'invalid ezkey')
  await refused(t, user.accountId, () => get(`/ez?ezkey=${wrong}&stat=x&count=1`), 200, 'invalid ezkey', 'GET')
  await refused(
    t,
    user.accountId,
    () => request(app.url, '/ez', { json: { ezkey: wrong, stat: 'x', count: 1 } }),
    200,
    'invalid ezkey',
    'JSON',
  )
  await refused(t, user.accountId, () => post('/c', `ukey=${wrong}&key=x&count=1`), 200, 'invalid ukey', '/c')
  await refused(t, user.accountId, () => post('/v', `ukey=${wrong}&key=x&value=1`), 200, 'invalid ukey', '/v')
  await refused(
    t,
    user.accountId,
    () => post('/ez', 'ezkey=you%40example.com&stat=x&count=1'),
    200,
    'invalid ezkey',
    'an e-mail address is not a key',
  )
  // A bad key wins over malformed input: nothing about the input is disclosed to an unauthenticated caller.
  await refused(t, user.accountId, () => post('/ez', `ezkey=${wrong}&stat=x&count=abc`), 200, 'invalid ezkey', 'bad key and bad count')
})

test('4.1.4 missing key -> 200 with status "error" by default, nothing stored', async (t) => {
  const { user } = await keyed()
  await refused(t, user.accountId, () => post('/ez', 'stat=x&count=1'), 200, MISSING)
  await refused(t, user.accountId, () => post('/ez', 'ezkey=&stat=x&count=1'), 200, MISSING, 'empty ezkey')
  await refused(t, user.accountId, () => post('/ez', 'ezkey=+++&stat=x&count=1'), 200, MISSING, 'blank ezkey')
  await refused(t, user.accountId, () => get('/ez?stat=x&count=1'), 200, MISSING, 'GET')
  await refused(t, user.accountId, () => post('/c', 'key=x&count=1'), 200, MISSING, '/c')
})

test('4.1.4 strict mode: bad key -> 401', async (t) => {
  const { user } = await keyed()
  await refused(t, user.accountId, () => post('/ez', 'ezkey=nope&stat=x&count=1', STRICT), 401, 'invalid ezkey')
  await refused(t, user.accountId, () => get('/ez?ezkey=nope&stat=x', STRICT), 401, 'invalid ezkey', 'GET')
  await refused(t, user.accountId, () => post('/c', 'ukey=nope&key=x&count=1', STRICT), 401, 'invalid ukey', '/c')
  await refused(t, user.accountId, () => post('/v', 'ukey=nope&key=x&value=1', STRICT), 401, 'invalid ukey', '/v')
  await refused(t, user.accountId, () => post('/ez', 'stat=x&count=1', STRICT), 401, MISSING, 'missing key')
  // Only the value 1 asks for strict mode.
  await refused(
    t,
    user.accountId,
    () => post('/ez', 'ezkey=nope&stat=x', { 'x-service-strict': '0' }),
    200,
    'invalid ezkey',
    'X-Service-Strict: 0',
  )
})

test('7 malformed input -> 400 in both modes: invalid count: not a number', async (t) => {
  const { user, key } = await keyed('pro')
  const texts = ['abc', '0x1A', '12abc', '1,5', 'NaN', 'Infinity', '-Infinity', '1e', '.', '--1', '1 2', 'true', '[1]']
  for (const headers of [{}, STRICT]) {
    for (const text of texts)
      await refused(
        t,
        user.accountId,
        () => post('/ez', `ezkey=${key}&stat=n&count=${enc(text)}`, headers),
        400,
        NOT_A_NUMBER,
        `form ${text}`,
      )
    for (const count of [true, false, [1], { n: 1 }, 'abc', '0x10']) {
      await refused(
        t,
        user.accountId,
        () => request(app.url, '/ez', { json: { ezkey: key, stat: 'n', count }, headers }),
        400,
        NOT_A_NUMBER,
        `JSON ${JSON.stringify(count)}`,
      )
    }
    await refused(t, user.accountId, () => get(`/ez?ezkey=${key}&stat=n&count=abc`, headers), 400, NOT_A_NUMBER, 'GET')
    await refused(t, user.accountId, () => post('/c', `ukey=${key}&key=n&count=abc`, headers), 400, NOT_A_NUMBER, '/c')
    await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=n&value=abc`, headers), 400, 'invalid value: not a number', '/v')
    await refused(
      t,
      user.accountId,
      () => post('/ez', `ezkey=${key}&stat=n&value=0x1A`, headers),
      400,
      'invalid value: not a number',
      '/ez value',
    )
  }
})

test('7 malformed input -> 400 in both modes: invalid count: out of range (magnitude above 1e15); exactly 1e15 is accepted', async (t) => {
  const { user, key } = await keyed()
  for (const headers of [{}, STRICT]) {
    for (const text of ['1e16', '-1e16', '1000000000000001', '1e400', '-1000000000000000.5']) {
      await refused(t, user.accountId, () => post('/ez', `ezkey=${key}&stat=big&count=${enc(text)}`, headers), 400, OUT_OF_RANGE, text)
    }
    await refused(
      t,
      user.accountId,
      () => request(app.url, '/ez', { json: { ezkey: key, stat: 'big', count: 1e16 }, headers }),
      400,
      OUT_OF_RANGE,
      'JSON',
    )
    await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=big&value=2e15`, headers), 400, 'invalid value: out of range', '/v')
  }
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=big&count=1e15`)).body, OK)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=big&count=-1000000000000000`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'big'), [-1e15, 1e15])
})

test('8 malformed input -> 400 in both modes: invalid timestamp: too far in the future (more than 5 minutes ahead)', async (t) => {
  const { user, key } = await keyed()
  for (const headers of [{}, STRICT]) {
    await refused(t, user.accountId, () => post('/ez', `ezkey=${key}&stat=f&count=1&t=${nowSeconds() + 3600}`, headers), 400, FUTURE)
    await refused(t, user.accountId, () => post('/c', `ukey=${key}&key=f&t=${nowSeconds() + 400}`, headers), 400, FUTURE, '/c')
    await refused(
      t,
      user.accountId,
      () => request(app.url, '/ez', { json: { ezkey: key, stat: 'f', value: 1, t: nowSeconds() + 86400 }, headers }),
      400,
      FUTURE,
      'JSON',
    )
  }
  // Up to 5 minutes ahead is inside the window.
  const ahead = nowSeconds() + 240
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=f&count=1&t=${ahead}`)).body, OK)
  t.deepEqual(await pointsOfStat(user.accountId, 'f'), [{ ts: ahead, value: 1 }])
})

test('8 t unit: milliseconds are read as a far-future date and rejected', async (t) => {
  const { user, key } = await keyed()
  for (const headers of [{}, STRICT]) {
    await refused(t, user.accountId, () => post('/ez', `ezkey=${key}&stat=ms&count=1&t=${Date.now()}`, headers), 400, FUTURE)
    await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=ms&value=1&t=${Date.now()}`, headers), 400, FUTURE, '/v')
    await refused(
      t,
      user.accountId,
      () => request(app.url, '/ez', { json: { ezkey: key, stat: 'ms', count: 1, t: Date.now() }, headers }),
      400,
      FUTURE,
      'JSON',
    )
  }
})

test('8 malformed input -> 400 in both modes: invalid timestamp: before 2000-01-01 (with a hint about uninitialised values)', async (t) => {
  const { user, key } = await keyed()
  for (const headers of [{}, STRICT]) {
    for (const ts of ['0', '946684799', '-1', '1']) {
      const before = await snapshot(user.accountId)
      const res = await post('/ez', `ezkey=${key}&stat=old&count=1&t=${ts}`, headers)
      t.is(res.status, 400, ts)
      t.is(res.body.status, 'error')
      t.true(res.body.msg.startsWith('invalid timestamp: before 2000-01-01'), res.body.msg)
      t.regex(res.body.msg, /uninitiali[sz]ed/)
      t.deepEqual(Object.keys(res.body).sort(), ['msg', 'status'])
      t.deepEqual(await snapshot(user.accountId), before)
    }
  }
  // 2000-01-01T00:00:00Z itself, and any past distance inside the window, is accepted.
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=old&count=1&t=946684800`)).body, OK)
  t.deepEqual(await pointsOfStat(user.accountId, 'old'), [{ ts: 946684800, value: 1 }])
})

test('8 fractional t is truncated to the whole second (check the stored ts)', async (t) => {
  const { user, key } = await keyed()
  const base = nowSeconds() - 3600
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=frac&count=1&t=${base}.999`)).body, OK)
  t.deepEqual((await request(app.url, '/ez', { json: { ezkey: key, stat: 'frac', count: 2, t: base + 10.5 } })).body, OK)
  t.deepEqual((await post('/v', `ukey=${key}&key=frac+g&value=3&t=${base + 20}.01`)).body, OK)
  t.deepEqual(await pointsOfStat(user.accountId, 'frac'), [
    { ts: base, value: 1 },
    { ts: base + 10, value: 2 },
  ])
  t.deepEqual(await pointsOfStat(user.accountId, 'frac g'), [{ ts: base + 20, value: 3 }])
})

test('2.1 malformed input -> 400 in both modes: the stat name contains invalid characters; nothing stored, no stat created', async (t) => {
  const { user, key } = await keyed('pro')
  for (const headers of [{}, STRICT]) {
    for (const name of [
      'wtfs/minute',
      'ws0: load average',
      'messages sent~total',
      'a,b',
      'tab\there',
      '<b>',
      'a+b',
      'é"',
      'line\nbreak',
      "quote's",
    ]) {
      await refused(
        t,
        user.accountId,
        () => post('/ez', `ezkey=${key}&stat=${enc(name)}&count=1`, headers),
        400,
        BAD_NAME,
        JSON.stringify(name),
      )
    }
    await refused(t, user.accountId, () => post('/c', `ukey=${key}&key=a%2Fb&count=1`, headers), 400, BAD_NAME, '/c')
    await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=a%3Ab&value=1`, headers), 400, BAD_NAME, '/v')
    await refused(t, user.accountId, () => get(`/ez?ezkey=${key}&stat=a%3Bb`, headers), 400, BAD_NAME, 'GET')
    await refused(
      t,
      user.accountId,
      () => request(app.url, '/ez', { json: { ezkey: key, stat: 'a|b', count: 1 }, headers }),
      400,
      BAD_NAME,
      'JSON',
    )
  }
  // The allowed set: letters, numbers, spaces, dot, underscore, hyphen.
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=${enc('Ok name_1.2-3')}&count=1`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'Ok name_1.2-3'), [1])
})

test('2.1 a stat name longer than 128 characters -> 400, nothing stored; 128 is accepted', async (t) => {
  const { user, key } = await keyed()
  const before = await snapshot(user.accountId)
  const res = await post('/ez', `ezkey=${key}&stat=${'a'.repeat(129)}&count=1`)
  t.is(res.status, 400)
  t.is(res.body.status, 'error')
  t.deepEqual(await snapshot(user.accountId), before)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=${'a'.repeat(128)}&count=1`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'a'.repeat(128)), [1])
})

test('2.1 & is silently removed from a stat name (sent encoded as %26): stored under the other name, no error', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=R%26D+spend&count=5`)).body, OK)
  t.deepEqual((await get(`/ez?ezkey=${key}&stat=R%26D+spend&count=6`)).body, OK)
  t.deepEqual((await post('/c', `ukey=${key}&key=a%26%26b&count=1`)).body, OK)
  t.deepEqual((await request(app.url, '/ez', { json: { ezkey: key, stat: 'R&D spend', count: 7 } })).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'RD spend'), [5, 6, 7])
  t.deepEqual(await valuesOf(user.accountId, 'ab'), [1])
  t.is(await kindOfStat(user.accountId, 'R&D spend'), undefined)
})

test('2.1 type conflict: count to a gauge or value to a counter -> 400 in both modes, nothing stored', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=ctr&count=1`)).body, OK)
  t.deepEqual((await post('/v', `ukey=${key}&key=gge&value=1`)).body, OK)
  for (const headers of [{}, STRICT]) {
    for (const [label, send, stat, kind] of [
      ['/ez value to counter', () => post('/ez', `ezkey=${key}&stat=ctr&value=2`, headers), 'ctr', 'counter'],
      ['/v to counter', () => post('/v', `ukey=${key}&key=ctr&value=2`, headers), 'ctr', 'counter'],
      ['JSON value to counter', () => request(app.url, '/ez', { json: { ezkey: key, stat: 'ctr', value: 2 }, headers }), 'ctr', 'counter'],
      ['/ez count to gauge', () => post('/ez', `ezkey=${key}&stat=gge&count=2`, headers), 'gge', 'gauge'],
      ['/ez default count to gauge', () => post('/ez', `ezkey=${key}&stat=gge`, headers), 'gge', 'gauge'],
      ['/c to gauge', () => post('/c', `ukey=${key}&key=gge&count=2`, headers), 'gge', 'gauge'],
    ] as Array<[string, () => Promise<Reply>, string, string]>) {
      const before = await snapshot(user.accountId)
      const res = await send()
      t.is(res.status, 400, label)
      t.is(res.body.status, 'error', label)
      t.regex(res.body.msg, new RegExp(`^type conflict: stat "${stat}" is a ${kind}`), label)
      t.deepEqual(await snapshot(user.accountId), before, label)
    }
  }
  t.deepEqual(await valuesOf(user.accountId, 'ctr'), [1])
  t.deepEqual(await valuesOf(user.accountId, 'gge'), [1])
})

test('4.1.1 /ez with both count and value -> 400, nothing stored', async (t) => {
  const { user, key } = await keyed()
  const before = await snapshot(user.accountId)
  const res = await post('/ez', `ezkey=${key}&stat=both&count=1&value=2`)
  t.is(res.status, 400)
  t.is(res.body.status, 'error')
  t.deepEqual(await snapshot(user.accountId), before)
})

test('4.1.4 CORS: Access-Control-Allow-Origin: * on success, on every kind of error, and an OPTIONS preflight', async (t) => {
  const { key } = await keyed()
  const origin = { origin: 'https://app.example.org' }
  const replies: Array<[string, Reply]> = [
    ['success', await post('/ez', `ezkey=${key}&stat=cors&count=1`, origin)],
    ['GET success', await get(`/ez?ezkey=${key}&stat=cors`, origin)],
    ['/c success', await post('/c', `ukey=${key}&key=cors`, origin)],
    ['/v success', await post('/api/v', `ukey=${key}&key=cors+g&value=1`, origin)],
    ['bad key 200', await post('/ez', 'ezkey=nope&stat=cors', origin)],
    ['bad key strict 401', await post('/c', 'ukey=nope&key=cors', { ...origin, ...STRICT })],
    ['malformed 400', await post('/ez', `ezkey=${key}&stat=cors&count=abc`, origin)],
    ['bad JSON 400', await request(app.url, '/ez', { body: '{"ezkey":', headers: { ...origin, 'content-type': 'application/json' } })],
  ]
  for (const [label, res] of replies) t.is(res.headers.get('access-control-allow-origin'), '*', `${label} (${res.status})`)
  t.is(replies[0][1].status, 200)
  t.is(replies[5][1].status, 401)
  t.is(replies[6][1].status, 400)
  for (const path of ['/ez', '/c', '/v', '/api/ez', '/api/c', '/api/v']) {
    const pre = await request(app.url, path, {
      method: 'OPTIONS',
      headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-service-strict' },
    })
    t.true(pre.status === 204 || pre.status === 200, `${path} preflight ${pre.status}`)
    t.is(pre.headers.get('access-control-allow-origin'), '*', path)
    t.regex(pre.headers.get('access-control-allow-methods') ?? '', /POST/, path)
    t.regex(pre.headers.get('access-control-allow-headers') ?? '', /x-service-strict/i, path)
  }
})

test('decisions 4: a body over 256 KiB -> 413 (declared length or chunked), nothing stored; exactly 256 KiB is read', async (t) => {
  const { user, key } = await keyed()
  const head = `ezkey=${key}&stat=big+body&count=1&pad=`
  const limit = 256 * 1024
  const before = await snapshot(user.accountId)
  const over = await request(app.url, '/ez', { form: head + 'x'.repeat(limit + 1 - head.length) })
  t.is(over.status, 413)
  t.is(over.headers.get('access-control-allow-origin'), '*')
  t.is((await request(app.url, '/ez', { form: head + 'x'.repeat(limit + 1 - head.length), headers: STRICT })).status, 413, 'strict')
  const json = JSON.stringify({ ezkey: key, stat: 'big body', count: 1, pad: 'x'.repeat(limit) })
  t.is((await request(app.url, '/ez', { body: json, headers: { 'content-type': 'application/json' } })).status, 413, 'JSON')
  const { host } = new URL(app.url)
  const chunk = 'x'.repeat(64 * 1024)
  const chunked = [
    `POST /ez HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
    `${head.length.toString(16)}\r\n${head}\r\n`,
    ...Array.from({ length: 5 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`),
    '0\r\n\r\n',
  ].join('')
  t.is((await rawHttp(chunked)).status, 413, 'chunked, no Content-Length')
  t.deepEqual(await snapshot(user.accountId), before)
  const exact = await request(app.url, '/ez', { form: head + 'x'.repeat(limit - head.length) })
  t.is(exact.status, 200)
  t.deepEqual(exact.body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'big body'), [1])
})

test('4.1.4 rate limited -> 429 in default mode too, with the envelope; nothing stored', async (t) => {
  const { user, key } = await keyed() // free plan: 20 requests/s, burst 100
  const before = await snapshot(user.accountId)
  const replies = await Promise.all(Array.from({ length: 300 }, () => post('/ez', `ezkey=${key}&stat=rl&count=abc`)))
  const limited = replies.filter((r) => r.status === 429)
  t.true(limited.length > 0, 'some requests were rate limited')
  t.true(replies.every((r) => r.status === 429 || r.status === 400))
  t.deepEqual(limited[0].body, { status: 'error', msg: 'rate limit exceeded, slow down' })
  t.truthy(limited[0].headers.get('retry-after'))
  t.deepEqual(await snapshot(user.accountId), before)
})

const setPointsUsed = (accountId: string, used: number) => setPointsUsedToday(app, accountId, used)

test('4.1.4/7 plan quota reached (daily points) -> 200 with status "error" by default, 429 in strict mode; nothing stored', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=quota&count=1`)).body, OK)
  await setPointsUsed(user.accountId, 100_000) // the free plan's daily limit
  const msg = 'plan limit reached: the free plan records at most 100000 points per day'
  await refused(t, user.accountId, () => post('/ez', `ezkey=${key}&stat=quota&count=1`), 200, msg)
  await refused(t, user.accountId, () => post('/c', `ukey=${key}&key=quota`, STRICT), 429, msg, 'strict')
  await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=new+gauge&value=1`), 200, msg, 'a new stat is not created')
  // A refused write with an ikey did not land: once allowance is back, the same retry is stored, not deduplicated.
  const ts = nowSeconds() - 10
  await refused(
    t,
    user.accountId,
    () => post('/ez', `ezkey=${key}&stat=quota&count=7&t=${ts}&ikey=retry-me`, STRICT),
    429,
    msg,
    'with ikey',
  )
  await setPointsUsed(user.accountId, 1)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=quota&count=7&t=${ts}&ikey=retry-me`)).body, OK)
  t.deepEqual(
    (await pointsOfStat(user.accountId, 'quota')).filter((p) => p.ts === ts),
    [{ ts, value: 7 }],
  )
})

test('4.1.4/7 plan quota reached (free plan: 10 tracked stats) -> 200 with status "error" by default, 429 strict; no 11th stat', async (t) => {
  const { user, key } = await keyed()
  for (let i = 1; i <= 10; i++) t.deepEqual((await post('/c', `ukey=${key}&key=s${i}`)).body, OK)
  const msg = 'plan limit reached: the free plan tracks at most 10 stats'
  await refused(t, user.accountId, () => post('/ez', `ezkey=${key}&stat=s11&count=1`), 200, msg)
  await refused(t, user.accountId, () => post('/v', `ukey=${key}&key=s11&value=1`, STRICT), 429, msg, 'strict')
  // Existing stats still take points.
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=s1&count=2`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 's1'), [1, 2])
})

test('4.1.4/7 a server-side failure (Redis unreachable) -> 200 with status "error" by default, 5xx in strict mode; nothing stored', async (t) => {
  const { user, key } = await keyed()
  const broken = await app.another({ REDIS_URL: 'redis://127.0.0.1:1' })
  const before = await snapshot(user.accountId)
  const res = await request(broken.url, '/ez', { form: `ezkey=${key}&stat=down&count=1` })
  t.is(res.status, 200)
  t.is(res.body.status, 'error')
  t.is(typeof res.body.msg, 'string')
  const strict = await request(broken.url, '/c', { form: `ukey=${key}&key=down`, headers: STRICT })
  t.true(strict.status >= 500 && strict.status < 600, `strict ${strict.status}`)
  t.is(strict.body.status, 'error')
  t.is(strict.headers.get('access-control-allow-origin'), '*')
  t.deepEqual(await snapshot(user.accountId), before)
})

// ============================================================ decisions 4a: real clients

test('decisions 4a: a POST with no Content-Type is read as a form', async (t) => {
  const { user, key } = await keyed()
  const { host } = new URL(app.url)
  for (const [path, body] of [
    ['/ez', `ezkey=${key}&stat=untyped&count=2`],
    ['/c', `ukey=${key}&key=untyped&count=3`],
    ['/v', `ukey=${key}&key=untyped+g&value=4`],
  ]) {
    const res = await rawHttp(
      `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
    t.is(res.status, 200, path)
    t.deepEqual(res.body, OK, path)
    t.is(res.headers['access-control-allow-origin'], '*')
  }
  t.deepEqual(await valuesOf(user.accountId, 'untyped'), [2, 3])
  t.deepEqual(await valuesOf(user.accountId, 'untyped g'), [4])
})

test('decisions 4a: a text/plain (or any non-JSON) body is read as a form', async (t) => {
  const { user, key } = await keyed()
  for (const type of [
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/octet-stream',
    'multipart/form-data',
    'x-www-form-urlencoded',
  ]) {
    const res = await request(app.url, '/ez', { body: `ezkey=${key}&stat=plain&count=1`, headers: { 'content-type': type } })
    t.deepEqual(res.body, OK, type)
  }
  t.deepEqual(
    (await request(app.url, '/v', { body: `ukey=${key}&key=plain+g&value=2`, headers: { 'content-type': 'text/plain' } })).body,
    OK,
  )
  t.deepEqual(await valuesOf(user.accountId, 'plain'), [1, 1, 1, 1, 1])
  t.deepEqual(await valuesOf(user.accountId, 'plain g'), [2])
})

test('decisions 4a: parameters only in the query string of an empty POST', async (t) => {
  const { user, key } = await keyed()
  const { host } = new URL(app.url)
  t.deepEqual((await request(app.url, `/ez?ezkey=${key}&stat=qs&count=2`, { method: 'POST' })).body, OK)
  t.deepEqual((await request(app.url, `/c?ukey=${key}&key=qs&count=3`, { method: 'POST', form: '' })).body, OK)
  t.deepEqual((await request(app.url, `/v?ukey=${key}&key=qs+g&value=4`, { method: 'POST', headers: { 'content-length': '0' } })).body, OK)
  const raw = await rawHttp(
    `POST /api/ez?ezkey=${key}&stat=qs&count=5 HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
  )
  t.deepEqual(raw.body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'qs'), [2, 3, 5])
  t.deepEqual(await valuesOf(user.accountId, 'qs g'), [4])
})

test('decisions 4a: on POST the query string is read too and the body wins on a clash', async (t) => {
  const { user, key } = await keyed()
  // Stat from the query, key and count from the body.
  t.deepEqual((await post(`/ez?stat=from+query`, `ezkey=${key}&count=2`)).body, OK)
  // Clash: the body's stat and count win over the query's.
  t.deepEqual((await post(`/ez?stat=loser&count=99`, `ezkey=${key}&stat=winner&count=3`)).body, OK)
  // Clash on the key: a bad key in the query does not hide the good one in the body.
  t.deepEqual((await post(`/c?ukey=nope&key=loser`, `ukey=${key}&key=winner&count=4`)).body, OK)
  // JSON body wins over the query too.
  t.deepEqual((await request(app.url, '/ez?stat=loser&count=99', { json: { ezkey: key, stat: 'winner', count: 5 } })).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'from query'), [2])
  t.deepEqual(await valuesOf(user.accountId, 'winner'), [3, 4, 5])
  t.is(await kindOfStat(user.accountId, 'loser'), undefined)
})

test('decisions 4a: raw spaces, raw @ and /, UTF-8 bytes, + for space, empty pairs, a trailing & and keys in any order', async (t) => {
  const { user, key } = await keyed()
  const forms = [
    [`ezkey=${key}&stat=raw spaces here&count=1`, 'raw spaces here'],
    [`&&count=2&&stat=plus+for+space&ezkey=${key}&`, 'plus for space'],
    [`stat=Zugriffe über Web&ezkey=${key}&count=3&`, 'Zugriffe über Web'],
    [`count=4&note=me@example.com/path&ikey=a@b/c&stat=raw at and slash&ezkey=${key}`, 'raw at and slash'],
    [`ezkey=${key}&stat=m%C2%B2+mixed%20encoding&count=5&&&`, 'm² mixed encoding'],
  ]
  for (const [form, name] of forms) {
    const res = await post('/ez', form)
    t.deepEqual(res.body, OK, form)
    t.is(res.status, 200)
    t.deepEqual(await valuesOf(user.accountId, name), [Number(form.match(/count=(\d)/)![1])], name)
  }
  t.deepEqual((await post('/c', `&key=über zähler&ukey=${key}&count=6&`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'über zähler'), [6])
})

test('decisions 4a: unknown parameters (vb=1, stray keys) are ignored and the JSON envelope is always sent', async (t) => {
  const { user, key } = await keyed()
  const res = await post('/ez', `ezkey=${key}&stat=unknowns&count=1&vb=1&foo=bar&callback=x`)
  t.is(res.status, 200)
  t.deepEqual(res.body, OK)
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/)
  t.deepEqual((await post('/c', `ukey=${key}&key=unknowns&vb=0&count=2&=orphan`)).body, OK)
  t.deepEqual((await request(app.url, '/ez', { json: { ezkey: key, stat: 'unknowns', count: 3, vb: 1, extra: { a: 1 } } })).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'unknowns'), [1, 2, 3])
})

test('decisions 4a/4.1.3: a stray `data` field in a form or query string is an unknown parameter, not a JSON batch', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=stray&count=1&data=x`)).body, OK)
  t.deepEqual((await get(`/ez?ezkey=${key}&stat=stray&count=2&data=`)).body, OK)
  t.deepEqual((await post(`/ez?data=1`, `ezkey=${key}&stat=stray&count=3`)).body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'stray'), [1, 2, 3])
})

test('decisions 4a: numbers as real clients format them: 1, 1.0, 92.194000, 1e+06, 1e-05, 1.0E7', async (t) => {
  const { user, key } = await keyed('pro') // 16 stats: more than the free plan tracks
  const formats: Array<[string, number]> = [
    ['1', 1],
    ['1.0', 1],
    ['92.194000', 92.194],
    ['1e+06', 1e6],
    ['1e-05', 1e-5],
    ['1.0E7', 1e7],
    ['-3.5', -3.5],
    [' 7 ', 7],
  ]
  for (const [text, n] of formats) {
    const stat = `fmt ${formats.findIndex(([x]) => x === text)}`
    t.deepEqual((await post('/ez', `ezkey=${key}&stat=${enc(stat)}&count=${enc(text)}`)).body, OK, `/ez count ${text}`)
    t.deepEqual((await get(`/ez?ezkey=${key}&stat=${enc(stat)}&count=${enc(text)}`)).body, OK, `GET ${text}`)
    t.deepEqual((await post('/c', `ukey=${key}&key=${enc(stat)}&count=${enc(text)}`)).body, OK, `/c ${text}`)
    t.deepEqual((await post('/v', `ukey=${key}&key=${enc(`${stat} g`)}&value=${enc(text)}`)).body, OK, `/v ${text}`)
    t.deepEqual(await valuesOf(user.accountId, stat), [n, n, n], text)
    t.deepEqual(await valuesOf(user.accountId, `${stat} g`), [n], text)
  }
})

// ---- replays of the captured requests (test/fixtures/predecessor/capture_*.txt), with a real key

test('4a replay capture_java_shlibs.txt: absolute-form request line, count=1.0 on /ez and value on /v', async (t) => {
  const { user, key } = await keyed()
  const [ezCount, postValue] = captured('capture_java_shlibs.txt')
  t.true(ezCount.head.startsWith('POST http://api.stathat.com/ez HTTP/1.1'))
  const r1 = await replay(ezCount, [['you%40example.com', key]])
  t.is(r1.status, 200)
  t.deepEqual(r1.body, OK)
  const r2 = await replay(postValue, [['UKEY', key]])
  t.deepEqual(r2.body, OK)
  t.deepEqual(await valuesOf(user.accountId, 'messages sent - female to male'), [1])
  t.is(await kindOfStat(user.accountId, 'messages sent - female to male'), 'counter')
  t.deepEqual(await valuesOf(user.accountId, 'SKEY'), [0.372])
  t.is(await kindOfStat(user.accountId, 'SKEY'), 'gauge')
})

test('4a replay capture_node_stathat-0.0.8.txt: unencoded bodies with raw spaces, @, + and a raw & in the stat name', async (t) => {
  const { user, key } = await keyed()
  const [ezCount, ezValueWithTime, trackCount, trackValue] = captured('capture_node_stathat-0.0.8.txt')
  t.deepEqual((await replay(ezCount, [['you@example.com', key]])).body, OK)
  // Request 2 as sent declares 73 bytes for a 74-byte UTF-8 body; replayed with the length corrected:
  // the raw & cuts the stat at `ws0 load+avg ` (+ is a space, edge whitespace trimmed), ` more/ü` is a stray key.
  const r2 = await replay(ezValueWithTime, [['you@example.com', key]], { fixLength: true })
  t.deepEqual(r2.body, OK)
  t.deepEqual(
    (
      await replay(trackCount, [
        ['UKEY', key],
        ['SKEY', 'node counter'],
      ])
    ).body,
    OK,
  )
  t.deepEqual(
    (
      await replay(trackValue, [
        ['UKEY', key],
        ['SKEY', 'node gauge'],
      ])
    ).body,
    OK,
  )
  t.deepEqual(await valuesOf(user.accountId, 'messages sent - female to male'), [3])
  t.deepEqual(await pointsOfStat(user.accountId, 'ws0 load avg'), [{ ts: 1362772440, value: 0.372 }])
  t.deepEqual(await valuesOf(user.accountId, 'node counter'), [1])
  t.deepEqual(await valuesOf(user.accountId, 'node gauge'), [9.5])
  t.is((await stored(app, user.accountId)).stats, 4)
})

test('4a replay capture_node_stathat-0.0.8.txt request 2 exactly as sent (Content-Length one byte short): t loses its last digit, rejected as before 2000, nothing stored', async (t) => {
  const { user, key } = await keyed()
  const [, ezValueWithTime] = captured('capture_node_stathat-0.0.8.txt')
  t.is(
    Buffer.byteLength(ezValueWithTime.body) - 1,
    Number(/content-length: (\d+)/i.exec(ezValueWithTime.head)![1]),
    'the capture declares one byte too few',
  )
  const before = await snapshot(user.accountId)
  const res = await replay(ezValueWithTime, [['you@example.com', key]])
  // The server reads 73 bytes (t=136277244, 1974) and refuses them; the stray last byte then makes
  // Node's parser answer a bare 400 on that connection, which may arrive before the envelope.
  t.is(res.status, 400)
  if (res.body?.msg !== undefined) t.regex(res.body.msg, /^invalid timestamp: before 2000-01-01/)
  t.deepEqual(await snapshot(user.accountId), before)
})

test('4a replay capture_python_pypi_stathat-0.3.0_requests.txt: email instead of ezkey; wtfs/minute has an invalid character', async (t) => {
  const { user, key } = await keyed()
  const [count, value] = captured('capture_python_pypi_stathat-0.3.0_requests.txt')
  const before = await snapshot(user.accountId)
  const r1 = await replay(count, [['me%40example.com', key]])
  t.is(r1.status, 400, '`/` is not in the allowed set of 2.1')
  t.deepEqual(r1.body, { status: 'error', msg: BAD_NAME })
  t.deepEqual(await snapshot(user.accountId), before)
  const r2 = await replay(value, [['me%40example.com', key]])
  t.is(r2.status, 200)
  t.deepEqual(r2.body, OK)
  t.deepEqual(await pointsOfStat(user.accountId, 'connections.active'), [{ ts: 1362772440, value: 85092 }])
  t.is(await kindOfStat(user.accountId, 'connections.active'), 'gauge')
})

test('5.5 replay capture_python_shlibs_urllib.txt: blocked at the edge (403 error code 1010) by default; accepted once the block is cleared', async (t) => {
  const { user, key } = await keyed()
  const reqs = captured('capture_python_shlibs_urllib.txt')
  const subs: Array<[string, string]> = [
    ['you%40example.com', key],
    ['UKEY', key],
  ]
  const before = await snapshot(user.accountId)
  for (const req of reqs) {
    const res = await replay(req, subs)
    t.is(res.status, 403)
    t.is(res.text, 'error code: 1010')
  }
  t.deepEqual(await snapshot(user.accountId), before)
  const open = await app.another({ EDGE_BLOCKED_USER_AGENTS: '' })
  const { port } = new URL(open.url)
  for (const req of reqs) {
    // Same bytes, sent to the process whose block is cleared.
    let body = req.body
    for (const [from, to] of subs) body = body.replaceAll(from, to)
    const head = req.head.replace(/^(content-length):\s*\d+$/im, `$1: ${Buffer.byteLength(body)}`)
    const res = await new Promise<RawReply>((resolve, reject) => {
      const sock = connect(Number(port), '127.0.0.1')
      let buf = ''
      sock.on('data', (c) => (buf += c.toString('utf8')))
      sock.on('error', reject)
      sock.on('close', () => {
        const text = buf.slice(buf.indexOf('\r\n\r\n') + 4)
        resolve({ status: Number(buf.split(' ')[1]), headers: {}, text, body: JSON.parse(text) })
      })
      sock.write(`${head}\r\n\r\n${body}`) // Connection: close in every captured request
    })
    t.is(res.status, 200)
    t.deepEqual(res.body, OK)
  }
  t.deepEqual(await valuesOf(user.accountId, 'messages sent - female to male'), [1])
  t.deepEqual(await pointsOfStat(user.accountId, 'SKEY'), [{ ts: 1362772440, value: 0.5 }])
  t.deepEqual(await pointsOfStat(user.accountId, 'ws0 load average'), [{ ts: 1362772440, value: 0.372 }])
})

test('5.5 edge block still applies on the legacy routes: User-Agent Python-urllib/2.7 -> 403 error code 1010, nothing stored', async (t) => {
  const { user, key } = await keyed()
  const before = await snapshot(user.accountId)
  for (const [path, send] of [
    ['/ez', () => post('/ez', `ezkey=${key}&stat=blocked&count=1`, { 'user-agent': 'Python-urllib/2.7' })],
    ['GET /ez', () => get(`/ez?ezkey=${key}&stat=blocked`, { 'user-agent': 'Python-urllib/2.7' })],
    ['/c', () => post('/c', `ukey=${key}&key=blocked`, { 'user-agent': 'Python-urllib/3.11' })],
    ['/api/v', () => post('/api/v', `ukey=${key}&key=blocked&value=1`, { 'user-agent': 'libwww-perl/6.72' })],
    [
      '/ez JSON',
      () =>
        request(app.url, '/ez', {
          json: { ezkey: key, stat: 'blocked', count: 1 },
          headers: { 'user-agent': 'Python-urllib/2.7', ...STRICT },
        }),
    ],
  ] as Array<[string, () => Promise<Reply>]>) {
    const res = await send()
    t.is(res.status, 403, path)
    t.is(res.text, 'error code: 1010', path)
    t.regex(res.headers.get('content-type') ?? '', /^text\/plain/, path)
  }
  t.deepEqual(await snapshot(user.accountId), before)
  // The same request with another User-Agent goes through.
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=blocked&count=1`, { 'user-agent': 'python-requests/2.34.2' })).body, OK)
})

// ============================================================ 4.1.4 replay disclosure and idempotency

test('4.1.4 replay: a second single write with the same explicit t to a counter -> replay "sums_with_existing"; both points kept', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 600
  t.deepEqual((await post('/c', `ukey=${key}&key=sales&count=1`)).body, OK) // the stat exists, written at receive time
  t.deepEqual((await post('/c', `ukey=${key}&key=sales&count=2&t=${ts}`)).body, OK, 'first write at t: no replay')
  t.deepEqual((await post('/c', `ukey=${key}&key=sales&count=3&t=${ts}`)).body, { ...OK, replay: 'sums_with_existing' })
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=sales&count=4&t=${ts}`)).body, { ...OK, replay: 'sums_with_existing' }, '/ez')
  t.deepEqual(
    (await request(app.url, '/ez', { json: { ezkey: key, stat: 'sales', t: ts } })).body,
    { ...OK, replay: 'sums_with_existing' },
    'JSON, default count',
  )
  const at = (await pointsOfStat(user.accountId, 'sales')).filter((p) => p.ts === ts)
  t.deepEqual(
    at.map((p) => p.value),
    [1, 2, 3, 4],
  )
})

test('4.1.4 replay: a second single write with the same explicit t to a gauge -> replay "averages_with_existing"', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 60
  t.deepEqual((await post('/v', `ukey=${key}&key=cpu&value=0.5`)).body, OK)
  t.deepEqual((await post('/v', `ukey=${key}&key=cpu&value=0.25&t=${ts}`)).body, OK)
  t.deepEqual((await post('/v', `ukey=${key}&key=cpu&value=0.75&t=${ts}`)).body, { ...OK, replay: 'averages_with_existing' })
  t.deepEqual((await get(`/ez?ezkey=${key}&stat=cpu&value=1&t=${ts}`)).body, { ...OK, replay: 'averages_with_existing' }, 'GET /ez')
  t.deepEqual(
    (await pointsOfStat(user.accountId, 'cpu')).filter((p) => p.ts === ts).map((p) => p.value),
    [0.25, 0.75, 1],
  )
})

test('4.1.4 replay: on a stat whose first write had an explicit t, a later write with the same t is disclosed once that point is stored', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 7200
  t.deepEqual(
    (await post('/ez', `ezkey=${key}&stat=fresh&value=5&t=${ts}`)).body,
    OK,
    'the first write (which creates the stat) has no replay',
  )
  await settle(app)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=fresh&value=6&t=${ts}`)).body, { ...OK, replay: 'averages_with_existing' })
  t.deepEqual(await valuesOf(user.accountId, 'fresh'), [5, 6])
})

test('4.1.4 replay: never on a first write, never without an explicit t', async (t) => {
  const { key } = await keyed()
  const ts = nowSeconds() - 100
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=nr&count=1&t=${ts}`)).body, OK, 'first write ever')
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=nr&count=1&t=${ts - 1}`)).body, OK, 'first write at another t')
  t.deepEqual((await post('/v', `ukey=${key}&key=nr+g&value=1&t=${ts}`)).body, OK, 'same t, another stat')
  for (let i = 0; i < 4; i++) {
    t.deepEqual((await post('/ez', `ezkey=${key}&stat=nr&count=1`)).body, OK, `no t, attempt ${i}`)
    t.deepEqual((await post('/v', `ukey=${key}&key=nr+g&value=2`)).body, OK, `no t gauge, attempt ${i}`)
    t.deepEqual((await post('/ez', `ezkey=${key}&stat=nr&count=1&t=`)).body, OK, `blank t, attempt ${i}`)
  }
})

test('4.1.4 idempotency: an ikey retry with the same t -> replay "duplicate_ignored", stored once and not billed', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 30
  t.deepEqual((await post('/c', `ukey=${key}&key=orders`)).body, OK) // the stat exists
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=orders&count=5&t=${ts}&ikey=order-1234`)).body, OK)
  const billed = await snapshot(user.accountId)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=orders&count=5&t=${ts}&ikey=order-1234`)).body, { ...OK, replay: 'duplicate_ignored' })
  t.deepEqual(
    (await request(app.url, '/ez', { json: { ezkey: key, stat: 'orders', count: 5, t: String(ts), ikey: 'order-1234' } })).body,
    { ...OK, replay: 'duplicate_ignored' },
    'JSON retry',
  )
  t.deepEqual(
    (await post('/ez', `ezkey=${key}&stat=orders&count=9&t=${ts}&ikey=order-1234`)).body,
    { ...OK, replay: 'duplicate_ignored' },
    'first write wins',
  )
  const after = await snapshot(user.accountId)
  t.is(after.quotaUsed, billed.quotaUsed, 'not billed')
  t.deepEqual(after, billed)
  t.deepEqual(
    (await pointsOfStat(user.accountId, 'orders')).filter((p) => p.ts === ts),
    [{ ts, value: 5 }],
  )
})

test('4.1.4 idempotency: an ikey on the write that creates the stat is honoured too', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 30
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=new+orders&count=5&t=${ts}&ikey=k1`)).body, OK)
  const billed = await snapshot(user.accountId)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=new+orders&count=5&t=${ts}&ikey=k1`)).body, { ...OK, replay: 'duplicate_ignored' })
  t.deepEqual(await snapshot(user.accountId), billed)
  t.deepEqual(await valuesOf(user.accountId, 'new orders'), [5])
})

test('4.1.4 idempotency: the same ikey with a different t is a new point; a different ikey at the same t is a new point', async (t) => {
  const { user, key } = await keyed()
  const ts = nowSeconds() - 300
  t.deepEqual((await post('/c', `ukey=${key}&key=pay`)).body, OK)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=pay&count=1&t=${ts}&ikey=same`)).body, OK)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=pay&count=2&t=${ts + 1}&ikey=same`)).body, OK)
  t.deepEqual((await post('/ez', `ezkey=${key}&stat=pay&count=3&t=${ts}&ikey=other`)).body, { ...OK, replay: 'sums_with_existing' })
  const s = await snapshot(user.accountId)
  t.is(s.quotaUsed, 4)
  t.deepEqual(
    (await pointsOfStat(user.accountId, 'pay')).filter((p) => p.ts <= ts + 1),
    [
      { ts, value: 1 },
      { ts, value: 3 },
      { ts: ts + 1, value: 2 },
    ],
  )
})

test('4.1.4 idempotency: without t each attempt gets its own arrival time and a retry with the same ikey double-counts (stored and billed again), with no replay', async (t) => {
  const { user, key } = await keyed()
  t.deepEqual((await post('/c', `ukey=${key}&key=retries`)).body, OK)
  // Send both attempts within one wall-clock second: the arrival times still make them two points.
  while (Date.now() % 1000 > 600) await new Promise((r) => setTimeout(r, 20))
  const first = await post('/ez', `ezkey=${key}&stat=retries&count=1&ikey=retry-1`)
  const second = await post('/ez', `ezkey=${key}&stat=retries&count=1&ikey=retry-1`)
  t.deepEqual(first.body, OK)
  t.deepEqual(second.body, OK, 'no replay disclosure without an explicit t')
  t.deepEqual(await valuesOf(user.accountId, 'retries'), [1, 1, 1])
  t.is((await stored(app, user.accountId)).quotaUsed, 3, 'billed again')
})
