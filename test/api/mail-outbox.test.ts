// E-mail without SMTP_URL (docs/decisions.md §15): outside production each mail is
// written to the outbox folder as an .eml file and its link printed, so e-mail
// alerts can be created and confirmed on a laptop; production refuses them with a 400 naming the setting.
import test from 'ava'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { loadConfig } from '../../shared/config.js'

let outbox: string
test.before(async () => {
  outbox = await mkdtemp(join(tmpdir(), 'outbox-'))
})
const app = appSuite({ env: () => ({ MAIL_OUTBOX_DIR: outbox }) })
test.serial.after.always(() => rm(outbox, { recursive: true, force: true }))

const emailAlert = (email: string) => ({
  stat_name: 'disk',
  condition_type: 'above',
  threshold: 1,
  window_minutes: 5,
  channel: 'email',
  channel_config: { email },
})

test('without SMTP_URL the confirmation mail lands in the outbox as .eml, and its link confirms the address', async (t) => {
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const res = await request(app.url, '/api/v1/alerts', { bearer: key, json: emailAlert('ops@example.com') })
  t.is(res.status, 201, res.text)
  t.is(res.body.alert.state, 'pending_confirmation')
  const files = (await readdir(outbox)).filter((f) => f.endsWith('.eml'))
  t.is(files.length, 1)
  const eml = await readFile(join(outbox, files[0]), 'utf8')
  t.regex(eml, /^To: ops@example\.com$/m)
  t.regex(eml, /^Subject: Confirm alert e-mails$/m)
  // The body is quoted-printable, as SMTP would carry it.
  const body = eml.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  const link = /http:\/\/[^\s/]+(\/api\/v1\/email\/confirm\?token=[A-Za-z0-9_-]+)/.exec(body)
  if (!link) return t.fail(`no confirmation link in:\n${eml}`)
  t.is((await request(app.url, link[1])).status, 200)
  t.is((await request(app.url, '/api/v1/alerts', { bearer: key })).body.alerts[0].state, 'ok')
})

test('production without SMTP_URL: an e-mail alert is a 400 naming SMTP_URL, and nothing is stored or written', async (t) => {
  const prodOutbox = await mkdtemp(join(tmpdir(), 'outbox-prod-'))
  t.teardown(() => rm(prodOutbox, { recursive: true, force: true }))
  const prod = await app.another({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example.com', MAIL_OUTBOX_DIR: prodOutbox })
  // Signed up on the other process: production's Secure session cookie is not sent over this plain-HTTP test server.
  const u = await signUp(app.url)
  const { key } = await createKey(app.url, u)
  const res = await request(prod.url, '/api/v1/alerts', { bearer: key, json: emailAlert('prod@example.com') })
  t.is(res.status, 400)
  t.is(res.body.code, 'email_unavailable')
  t.regex(res.body.detail, /SMTP_URL/)
  t.is((await app.sql`select 1 from alerts where account_id = ${u.accountId}`).length, 0)
  t.deepEqual(await readdir(prodOutbox), [])
})

test('the outbox is on by default in development only', (t) => {
  t.is(loadConfig({}).mailOutboxDir, '.data/outbox')
  t.is(loadConfig({ NODE_ENV: 'test' }).mailOutboxDir, undefined)
  t.is(
    loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example.com', MAIL_OUTBOX_DIR: '/tmp/x' }).mailOutboxDir,
    undefined,
  )
})
