import test from 'ava'
import { ConfigError, loadConfig, PASSWORD_HASH_COST } from '../../shared/config.js'
import { parseClusterUrl } from '../../shared/redis-url.js'

test('defaults work on a developer machine', (t) => {
  const c = loadConfig({})
  t.is(c.port, 3000)
  t.is(c.databaseUrl, 'postgres://localhost/metrics')
  t.is(c.redisUrl, 'redis://127.0.0.1:6379')
  t.is(c.alertEvalIntervalSeconds, 15)
  t.is(c.freeTierSlots, 250)
  t.deepEqual(c.edgeBlockedUserAgents, ['Python-urllib/', 'libwww-perl/'])
  t.false(c.webhookAllowPrivate)
  t.true(Object.isFrozen(c))
})

test('a bad value is refused with a message naming the variable', (t) => {
  const err = t.throws(() => loadConfig({ PORT: 'eighty', ALERT_EVAL_INTERVAL_SECONDS: '0' }), { instanceOf: ConfigError })
  t.regex(err!.message, /PORT/)
  t.regex(err!.message, /ALERT_EVAL_INTERVAL_SECONDS/)
  t.throws(() => loadConfig({ DATABASE_URL: 'not a url' }), { message: /DATABASE_URL/ })
  t.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'yes' }), { message: /WEBHOOK_ALLOW_PRIVATE/ })
})

test('EDGE_BLOCKED_USER_AGENTS: empty blocks none; a list is split on commas', (t) => {
  t.deepEqual(loadConfig({ EDGE_BLOCKED_USER_AGENTS: '' }).edgeBlockedUserAgents, [])
  t.deepEqual(loadConfig({ EDGE_BLOCKED_USER_AGENTS: 'BadBot/, Other/' }).edgeBlockedUserAgents, ['BadBot/', 'Other/'])
})

test('loopback webhook targets are allowed in development unless WEBHOOK_ALLOW_PRIVATE=0; 1 allows every private target', (t) => {
  t.like(loadConfig({}), { webhookAllowPrivate: false, webhookAllowLoopback: true })
  t.like(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '0' }), { webhookAllowPrivate: false, webhookAllowLoopback: false })
  t.like(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example' }), {
    webhookAllowPrivate: false,
    webhookAllowLoopback: false,
  })
  t.like(loadConfig({ NODE_ENV: 'test' }), { webhookAllowPrivate: false, webhookAllowLoopback: false })
  t.like(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '1' }), { webhookAllowPrivate: true, webhookAllowLoopback: true })
})

test('PASSWORD_HASH_COST: 15 by default; below it only with NODE_ENV=test, never in development or production', (t) => {
  t.is(PASSWORD_HASH_COST, 15)
  t.is(loadConfig({}).passwordHashCost, 15)
  t.is(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example', PASSWORD_HASH_COST: '16' }).passwordHashCost, 16)
  t.is(loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '10' }).passwordHashCost, 10)
  for (const NODE_ENV of ['production', 'development']) {
    const err = t.throws(() => loadConfig({ NODE_ENV, PUBLIC_URL: 'https://metrics.example', PASSWORD_HASH_COST: '14' }), {
      instanceOf: ConfigError,
    })
    t.regex(err!.message, /PASSWORD_HASH_COST: below 15 only in tests/)
  }
  t.throws(() => loadConfig({ PASSWORD_HASH_COST: '18' }), { message: /PASSWORD_HASH_COST/ })
})

test('REDIS_URL names a single node or a Redis Cluster by its seed nodes; anything else is refused naming it', (t) => {
  t.is(loadConfig({ REDIS_URL: 'rediss://user:pw@cache.internal:6380/2' }).redisUrl, 'rediss://user:pw@cache.internal:6380/2')
  const url = 'redis+cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002'
  t.is(loadConfig({ REDIS_URL: url }).redisUrl, url)
  t.deepEqual(parseClusterUrl(url), {
    nodes: [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ],
    username: 'app',
    password: 's@cret',
    tls: false,
  })
  t.is(parseClusterUrl('redis://10.0.0.1:7000'), undefined)
  for (const bad of [
    'redis+cluster://10.0.0.1',
    'redis+cluster://10.0.0.1:7000,',
    'redis+cluster://h:99999',
    'http://cache:6379',
    'not a url',
  ]) {
    t.throws(
      () => loadConfig({ REDIS_URL: bad }),
      { message: /REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or redis\+cluster:\/\// },
      bad,
    )
  }
})

test('DATABASE_READ_URL is optional; READ_REPLICA_MAX_LAG_SECONDS defaults to 5 and must be positive', (t) => {
  t.like(loadConfig({}), { databaseReadUrl: undefined, readReplicaMaxLagSeconds: 5 })
  t.like(loadConfig({ DATABASE_READ_URL: 'postgres://replica/metrics', READ_REPLICA_MAX_LAG_SECONDS: '2.5' }), {
    databaseReadUrl: 'postgres://replica/metrics',
    readReplicaMaxLagSeconds: 2.5,
  })
  t.throws(() => loadConfig({ READ_REPLICA_MAX_LAG_SECONDS: '0' }), { message: /READ_REPLICA_MAX_LAG_SECONDS/ })
  t.throws(() => loadConfig({ DATABASE_READ_URL: 'replica' }), { message: /DATABASE_READ_URL/ })
})

test('STRIPE_API_BASE (the local stand-in) is refused in production, accepted in development and tests', (t) => {
  const base = 'http://127.0.0.1:4010'
  const err = t.throws(() => loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example', STRIPE_API_BASE: base }), {
    instanceOf: ConfigError,
  })
  t.regex(err!.message, /STRIPE_API_BASE: refused in production/)
  t.is(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example' }).stripe.apiBase, undefined)
  t.is(loadConfig({ STRIPE_API_BASE: base }).stripe.apiBase, base)
  t.is(loadConfig({ NODE_ENV: 'test', STRIPE_API_BASE: base }).stripe.apiBase, base)
})

test('IO_COUNTS (benchmark instrumentation) is off unless set', (t) => {
  t.false(loadConfig({}).ioCounts)
  t.false(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example' }).ioCounts)
  t.true(loadConfig({ IO_COUNTS: '1' }).ioCounts)
  t.throws(() => loadConfig({ IO_COUNTS: 'yes' }), { message: /IO_COUNTS/ })
})
