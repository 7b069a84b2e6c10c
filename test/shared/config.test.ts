import test from 'ava'
import { ConfigError, loadConfig } from '../../shared/config.js'

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
