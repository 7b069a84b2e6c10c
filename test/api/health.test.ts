import test from 'ava'
import { appSuite } from '../helpers/suite.js'
import { closedPort, request } from '../helpers/http.js'

const app = appSuite()

test('health reports PostgreSQL, Redis and the queue as ok without credentials', async (t) => {
  const res = await request(app.url, '/api/v1/health')
  t.is(res.status, 200)
  t.is(res.body.status, 'ok')
  t.deepEqual(res.body.failing, [])
  for (const name of ['postgres', 'redis', 'queue']) t.is(res.body.checks[name].status, 'ok', name)
})

test('health is 503 naming postgres when PostgreSQL is unreachable', async (t) => {
  const port = await closedPort()
  const broken = await app.another({ DATABASE_URL: `postgres://127.0.0.1:${port}/nothing` })
  const res = await request(broken.url, '/api/v1/health')
  t.is(res.status, 503)
  t.is(res.body.status, 'error')
  t.deepEqual(res.body.failing, ['postgres'])
  t.is(res.body.checks.redis.status, 'ok')
  t.truthy(res.body.checks.postgres.error)
})

test('health is 503 naming redis and the queue when Redis is unreachable', async (t) => {
  const port = await closedPort()
  const broken = await app.another({ REDIS_URL: `redis://127.0.0.1:${port}` })
  const res = await request(broken.url, '/api/v1/health')
  t.is(res.status, 503)
  t.deepEqual(res.body.failing, ['redis', 'queue'])
  t.is(res.body.checks.postgres.status, 'ok')
})
