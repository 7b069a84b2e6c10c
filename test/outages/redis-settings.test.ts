// Redis settings that lose data. Under an evicting
// maxmemory-policy, health is 503 naming it and writes are refused (nothing
// stored); health reports AOF on or off; production is warned when it is off.
// Runs against redis-servers of its own.
import test from 'ava'
import { PassThrough } from 'node:stream'
import { Redis } from 'ioredis'
import { loadConfig } from '../../shared/config.js'
import { createLogger } from '../../shared/log.js'
import { RedisSettings } from '../../shared/redis.js'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js'
import { settle, stored } from '../helpers/storage.js'

let redis: OwnRedis
test.before(async () => {
  redis = await startOwnRedis({ aof: true, args: ['--maxmemory-policy', 'allkeys-lru'] })
})
const app = appSuite({ workers: true, env: () => ({ REDIS_URL: redis.url }) })
test.serial.after.always(() => redis?.destroy())

test.serial('an evicting maxmemory-policy: health 503 naming it, writes refused with nothing stored, until noeviction', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  const health = await request(app.url, '/api/v1/health')
  t.is(health.status, 503)
  t.deepEqual(health.body.failing, ['redis'])
  t.like(health.body.checks.redis, { status: 'error', maxmemory_policy: 'allkeys-lru', aof: 'on' })
  t.regex(health.body.checks.redis.error, /maxmemory-policy allkeys-lru may evict accepted points/)

  const message = /writes are refused: Redis runs with maxmemory-policy allkeys-lru/
  const v1 = await request(app.url, '/api/v1/stats/refused/count', { json: { count: 1 }, bearer: key })
  t.is(v1.status, 503)
  t.regex(v1.body.detail, message)
  const batch = await request(app.url, '/api/v1/points', { json: { points: [{ stat: 'refused', count: 1 }] }, bearer: key })
  t.is(batch.status, 503)
  const legacy = await request(app.url, '/c', { form: `ukey=${key}&key=refused&count=1` })
  t.deepEqual([legacy.status, legacy.body.status], [200, 'error'])
  t.regex(legacy.body.msg, message)
  const strict = await request(app.url, '/c', { form: `ukey=${key}&key=refused&count=1`, headers: { 'x-service-strict': '1' } })
  t.is(strict.status, 503)
  await settle(app)
  t.like(await stored(app, user.accountId), { stats: 0, points: 0, queued: 0, quotaUsed: 0 })
  t.true(
    app.logs.some((l) => l.includes('maxmemory-policy allkeys-lru, which may evict queued points')),
    'logged at start-up',
  )

  const admin = new Redis(redis.url)
  await admin.config('SET', 'maxmemory-policy', 'noeviction')
  admin.disconnect()
  const after = await request(app.url, '/api/v1/health')
  t.is(after.status, 200)
  t.like(after.body.checks.redis, { status: 'ok', maxmemory_policy: 'noeviction', aof: 'on' })
  t.is((await request(app.url, '/api/v1/stats/accepted/count', { json: { count: 1 }, bearer: key })).status, 200)
})

test.serial('without AOF: health says so, and production warns once', async (t) => {
  const plain = await startOwnRedis()
  t.teardown(() => plain.destroy())
  const other = await app.another({ REDIS_URL: plain.url })
  const health = await request(other.url, '/api/v1/health')
  t.like(health.body.checks.redis, { status: 'ok', maxmemory_policy: 'noeviction', aof: 'off' })

  for (const env of ['production', 'development'] as const) {
    const lines: string[] = []
    const stream = new PassThrough()
    stream.on('data', (c: Buffer) => lines.push(c.toString('utf8')))
    const connection = new Redis(plain.url)
    t.teardown(() => connection.disconnect())
    const settings = new RedisSettings(
      connection,
      loadConfig({ NODE_ENV: env, PUBLIC_URL: 'https://metrics.example.com' }),
      createLogger({ logLevel: 'info' }, stream),
    )
    await settings.refresh()
    await settings.refresh()
    settings.close()
    connection.disconnect()
    await new Promise((r) => setImmediate(r))
    const warned = lines.filter((l) => l.includes('Redis runs without AOF persistence'))
    t.is(warned.length, env === 'production' ? 1 : 0, env)
  }
})
