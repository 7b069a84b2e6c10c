// A job that is no longer where its worker left it when it finishes (the reply to its completion lost in a Redis
// restart and the command resent, or its lock taken over by another worker): BullMQ's "Missing key for job"
// is a warning of the worker, not an error (workers/main.ts), and what the job did stands.
import test from 'ava'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { deferred } from '../helpers/deferred.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { eventually } from '../helpers/receivers.js'

const app = appSuite({ workers: true })

test('a delivery job whose key vanished while it ran: one warning, no worker error, the delivery recorded', async (t) => {
  // A webhook receiver that holds its answer until told: the job is running meanwhile.
  const released = deferred()
  let received = 0
  const server = http.createServer((req, res) => {
    req.resume()
    received++
    void released.promise.then(() => res.writeHead(200).end('ok'))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`

  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const created = await request(app.url, '/api/v1/alerts', {
    json: {
      stat_name: 'held',
      condition_type: 'above',
      threshold: 1,
      window_minutes: 1,
      channel: 'webhook',
      channel_config: { webhook_url: hook },
    },
    bearer: key,
  })
  t.is(created.status, 201)
  const sent = await request(app.url, `/api/v1/alerts/${created.body.alert.id}/test`, { method: 'POST', json: {}, bearer: key })
  t.is(sent.status, 202, sent.text)
  const [delivery] = await app.sql<{ id: string }[]>`select id from alert_deliveries where alert_id = ${created.body.alert.id}`

  await eventually(() => received === 1 || undefined, 'the webhook to be called', 20_000)
  // The job's hash gone under the running job, as when its completion went through before a restart.
  const queue = app.api.deps.queues.get('deliver')
  t.is(await (await queue.client).del(queue.toKey(delivery.id)), 1)
  released.resolve()

  const parse = () => app.logs.map((l) => JSON.parse(l) as { level: string; message: string; error?: string })
  await eventually(() => parse().some((l) => l.message === 'job moved under the worker') || undefined, 'the warning', 20_000)
  const moved = parse().filter((l) => l.message === 'job moved under the worker')
  t.is(moved[0].level, 'warn')
  t.regex(moved[0].error ?? '', new RegExp(`^Missing key for job ${delivery.id}\\. moveToFinished`))
  t.deepEqual(
    parse().filter((l) => l.message === 'worker error'),
    [],
  )
  const [row] = await app.sql<{ status: string }[]>`select status from alert_deliveries where id = ${delivery.id}`
  t.is(row.status, 'delivered')
  t.is(received, 1)
})
