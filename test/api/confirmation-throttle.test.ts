// Confirmation mails for e-mail alerts. An address awaiting confirmation is never mailed
// again (however many alerts are created and deleted, in however many processes); an address gets them
// from at most 3 accounts a day, an account sends at most 10 a day; over a limit the alert is a 429 and
// nothing is stored. A real SMTP receiver counts what was sent.
import test from 'ava'
import { setTimeout as sleep } from 'node:timers/promises'
import { CONFIRMATIONS_PER_ACCOUNT, CONFIRMATIONS_PER_ADDRESS } from '../../shared/alerts/mail.js'
import type { TestApp } from '../helpers/app.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js'

let other: TestApp
let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
})
const app = appSuite({ env: () => ({ SMTP_URL: smtp.url }) })
test.before(async () => {
  other = await app.another({ SMTP_URL: smtp.url })
})
test.serial.after.always(() => smtp?.close())

async function user() {
  const u = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${u.accountId}`
  return { ...u, key: (await createKey(app.url, u)).key }
}

const emailAlert = (address: string) => ({
  stat_name: 'disk',
  condition_type: 'above',
  threshold: 90,
  channel: 'email',
  channel_config: { email: address },
})
const create = (base: string, key: string, address: string) => request(base, '/api/v1/alerts', { json: emailAlert(address), bearer: key })
const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase())).length
const alertsOf = async (accountId: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from alerts where account_id = ${accountId}`)[0].n
/** Long enough for a mail that was going to be sent to arrive. */
const quiet = () => sleep(500)

test('create and delete an e-mail alert six times, and six at once across two processes: one confirmation mail; its link arms what is left', async (t) => {
  const u = await user()
  const address = `victim.${u.accountId.slice(0, 8)}@example.com`
  for (let i = 0; i < 6; i++) {
    const res = await create(i % 2 ? other.url : app.url, u.key, i % 3 ? address : address.toUpperCase())
    t.is(res.status, 201, res.text)
    t.is(res.body.alert.state, 'pending_confirmation')
    t.is((await request(app.url, `/api/v1/alerts/${res.body.alert.id}`, { method: 'DELETE', bearer: u.key })).status, 204)
  }
  const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => create(i % 2 ? other.url : app.url, u.key, address)))
  t.true(
    burst.every((r) => r.status === 201),
    burst.map((r) => r.status).join(','),
  )
  const [mail] = await smtp.waitFor(1, (m) => m.to.some((to) => to.toLowerCase() === address))
  await quiet()
  t.is(mailsTo(address), 1, 'one mail, however many alerts')
  const link = new URL(/(https?:\/\/\S+\/api\/v1\/email\/confirm\?token=\S+)/.exec(mail.text)![1])
  t.is((await request(app.url, link.pathname + link.search)).status, 200)
  const states = await app.sql<{ state: string }[]>`select state from alerts where account_id = ${u.accountId}`
  t.deepEqual(
    states.map((s) => s.state),
    Array(6).fill('ok'),
    'the one link armed every alert to the address',
  )
})

test(`an address gets confirmation mails from at most ${CONFIRMATIONS_PER_ADDRESS} accounts a day; the next is 429 with nothing stored`, async (t) => {
  const address = `popular.${Date.now()}@example.com`
  const users = await Promise.all(Array.from({ length: CONFIRMATIONS_PER_ADDRESS + 1 }, user))
  for (const u of users.slice(0, CONFIRMATIONS_PER_ADDRESS)) t.is((await create(app.url, u.key, address)).status, 201)
  const last = users[CONFIRMATIONS_PER_ADDRESS]
  const refused = await create(other.url, last.key, address)
  t.is(refused.status, 429, refused.text)
  t.is(refused.body.code, 'confirmation_mail_throttled')
  t.regex(refused.body.detail, new RegExp(`^too many confirmation mails to ${address.replace(/\./g, '\\.')} today`))
  t.truthy(refused.headers.get('retry-after'))
  t.is(await alertsOf(last.accountId), 0, 'no alert stored')
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from email_confirmations where account_id = ${last.accountId}`
  t.is(n, 0, 'no confirmation recorded')
  await smtp.waitFor(CONFIRMATIONS_PER_ADDRESS, (m) => m.to.includes(address))
  await quiet()
  t.is(mailsTo(address), CONFIRMATIONS_PER_ADDRESS)
})

test(`an account sends at most ${CONFIRMATIONS_PER_ACCOUNT} confirmation mails a day; the next is 429 with nothing stored; confirmed addresses still work`, async (t) => {
  const u = await user()
  const addresses = Array.from({ length: CONFIRMATIONS_PER_ACCOUNT + 1 }, (_, i) => `a${i}.${u.accountId.slice(0, 8)}@example.com`)
  const results = await Promise.all(addresses.map((a, i) => create(i % 2 ? other.url : app.url, u.key, a)))
  t.deepEqual(
    results.map((r) => r.status).sort(),
    [...Array(CONFIRMATIONS_PER_ACCOUNT).fill(201), 429],
    'exactly one over the limit, even at once across processes',
  )
  const refused = results.find((r) => r.status === 429)!
  t.is(refused.body.code, 'confirmation_mail_throttled')
  t.regex(refused.body.detail, /this account has sent its 10 confirmation mails for today/)
  t.is(await alertsOf(u.accountId), CONFIRMATIONS_PER_ACCOUNT)
  await quiet()
  t.is(
    addresses.reduce((n, a) => n + mailsTo(a), 0),
    CONFIRMATIONS_PER_ACCOUNT,
  )
  // A pending address takes more alerts without a mail or the limit.
  const again = await create(app.url, u.key, addresses[results.findIndex((r) => r.status === 201)])
  t.is(again.status, 201, again.text)
})

test('a confirmation mail that could not be sent is sent on the next try', async (t) => {
  const down = await app.another({ SMTP_URL: 'smtp://127.0.0.1:1' })
  const u = await user()
  const address = `retry.${u.accountId.slice(0, 8)}@example.com`
  const failed = await create(down.url, u.key, address)
  t.is(failed.status, 503, failed.text)
  t.is(await alertsOf(u.accountId), 0)
  t.is((await create(app.url, u.key, address)).status, 201)
  await smtp.waitFor(1, (m) => m.to.includes(address))
  t.is(mailsTo(address), 1)
})
