import test from 'ava'
import { ConfigError, loadConfig, PASSWORD_HASH_COST } from '../../shared/config.js'

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

test('issue 19 item 4: loopback webhook targets are allowed in development unless WEBHOOK_ALLOW_PRIVATE=0; 1 allows every private target', (t) => {
  t.like(loadConfig({}), { webhookAllowPrivate: false, webhookAllowLoopback: true })
  t.like(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '0' }), { webhookAllowPrivate: false, webhookAllowLoopback: false })
  t.like(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example' }), { webhookAllowPrivate: false, webhookAllowLoopback: false })
  t.like(loadConfig({ NODE_ENV: 'test' }), { webhookAllowPrivate: false, webhookAllowLoopback: false })
  t.like(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '1' }), { webhookAllowPrivate: true, webhookAllowLoopback: true })
})

test('PASSWORD_HASH_COST: 15 by default; below it only with NODE_ENV=test, never in development or production', (t) => {
  t.is(PASSWORD_HASH_COST, 15)
  t.is(loadConfig({}).passwordHashCost, 15)
  t.is(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example', PASSWORD_HASH_COST: '16' }).passwordHashCost, 16)
  t.is(loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '10' }).passwordHashCost, 10)
  for (const NODE_ENV of ['production', 'development']) {
    const err = t.throws(() => loadConfig({ NODE_ENV, PUBLIC_URL: 'https://metrics.example', PASSWORD_HASH_COST: '14' }), { instanceOf: ConfigError })
    t.regex(err!.message, /PASSWORD_HASH_COST: below 15 only in tests/)
  }
  t.throws(() => loadConfig({ PASSWORD_HASH_COST: '18' }), { message: /PASSWORD_HASH_COST/ })
})
