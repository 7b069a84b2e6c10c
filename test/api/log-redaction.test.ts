// Redaction decodes parameter names as the routes do, so a
// percent-encoded name (`%65zkey`) or another credential-looking name
// (`api_key`, `access_token`) never leaves a secret in a log line.
import test from 'ava'
import { redactText } from '../../shared/log.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'

const app = appSuite()

test('item 2: no encoded or credential-looking parameter leaves a secret in any log line', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  await request(app.url, '/api/v1/stats/s/count', { json: { count: 1 }, bearer: key })
  const share = await request(app.url, '/api/v1/stats/s/share', { method: 'POST', bearer: key })
  const token: string = share.body.share.token
  const statId: string = share.body.share.stat_id
  const before = app.logs.length

  const ez = await request(app.url, `/ez?%65zkey=${key}&stat=s&count=1`)
  t.is(ez.body.status, 200, '%65zkey authenticates, as the routes decode it')
  await request(app.url, `/ez?ezke%79=${key}&stat=s`)
  await request(app.url, `/ez?%65mail=${key}&stat=s`)
  await request(app.url, `/c?%75key=${key}&key=s`, { form: '' })
  await request(app.url, `/ez?EZKEY=${key}&stat=s`)
  const embed = await request(app.url, `/api/v1/embed/${statId}?%74oken=${token}`)
  t.is(embed.status, 200, '%74oken is the token to the route')
  for (const name of ['api_key', 'access_token', 'apiKey', 'auth', 'password', 'client_secret']) {
    const res = await request(app.url, `/api/v1/stats?${name}=${key}`)
    t.is(res.status, 401, name)
  }
  await request(app.url, '/api/v1/health', { headers: { referer: `https://example.org/?%65zkey=${key}&%74oken=${token}&x=1` } })
  await request(app.url, `/api/v1/stats/${key}`, { bearer: 'mk_wrong' }) // a key pasted into a path

  const lines = app.logs.slice(before)
  t.true(lines.length >= 14, 'the requests were logged')
  const all = lines.join('\n')
  t.false(all.includes(key), 'API key leaked')
  t.false(all.includes(key.slice(16)), 'API key secret part leaked')
  t.false(all.includes(token), 'share token leaked')
  const health = lines.map((l) => JSON.parse(l)).find((l) => l.url === '/api/v1/health')
  t.regex(health.referrer, /%65zkey=\[REDACTED\]&%74oken=\[REDACTED\]&x=1$/, 'other parameters are kept')
})

test('item 2: redactText keeps ordinary parameters, the ikey among them', (t) => {
  t.is(redactText('/ez?stat=a&count=1&ikey=abc&t=5'), '/ez?stat=a&count=1&ikey=abc&t=5')
  t.is(redactText('/x?%6B%65%79=s3cret&range=24h'), '/x?%6B%65%79=[REDACTED]&range=24h')
  t.is(redactText('GET /x?a=1;access%5Ftoken=s3cret'), 'GET /x?a=1;access%5Ftoken=[REDACTED]')
  t.is(redactText('failed for /ez?e%7Akey=zz'), 'failed for /ez?e%7Akey=[REDACTED]')
})

test('the key shape is redacted anywhere in a logged line: inside other words, after encoded separators, percent-encoded itself', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const secret = key.slice(16)
  const encoded = key.replace(/_/g, '%5F')
  const before = app.logs.length
  await request(app.url, `/ez?x=1%26ezkey%3D${key}&stat=s&count=1`)
  await request(app.url, `/ez?x=%22${key}%22&stat=s`)
  await request(app.url, `/ez?x=a${key}&stat=s`)
  await request(app.url, `/api/v1/health?q=${encoded}`)
  await request(app.url, `/api/v1/health?q=%6D%6B_${key.slice(3)}`)
  // Not the bare /api/v1/health: the test above finds its own line by that URL, and tests run at once.
  await request(app.url, '/api/v1/health?probe=ua', { headers: { 'user-agent': `client/1 x${key}` } })
  await request(app.url, '/api/v1/health?probe=referer', { headers: { referer: `https://example.org/x${key}y` } })
  const lines = app.logs.slice(before)
  t.true(lines.length >= 7, 'the requests were logged')
  for (const line of lines) {
    t.false(line.includes(secret), `no secret part in ${line}`)
    t.false(line.includes(secret.slice(0, 16)), `not even half of it in ${line}`)
  }
  const parsed = lines.map((l) => JSON.parse(l))
  t.true(
    parsed.some((l) => l.user_agent === 'client/1 xmk_[REDACTED]'),
    'the rest of the User-Agent is kept',
  )
  t.true(
    parsed.some((l) => typeof l.url === 'string' && l.url.includes('x=%22mk_[REDACTED]%22&stat=s')),
    'the rest of the URL is kept',
  )
})
