// Logs: short readable lines in development, JSON lines elsewhere, redacted either way.
import { PassThrough } from 'node:stream'
import test from 'ava'
import { loadConfig } from '../../shared/config.js'
import { createLogger, prettyLine } from '../../shared/log.js'

function capture(format: 'json' | 'pretty') {
  const lines: string[] = []
  const stream = new PassThrough()
  stream.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n').filter(Boolean)))
  return { log: createLogger({ logLevel: 'info', logFormat: format }, stream), lines }
}

test('the default format is pretty in development and JSON in production and tests', (t) => {
  t.is(loadConfig({ NODE_ENV: 'development' }).logFormat, 'pretty')
  t.is(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://metrics.example.com' }).logFormat, 'json')
  t.is(loadConfig({ NODE_ENV: 'test' }).logFormat, 'json')
  t.is(loadConfig({ NODE_ENV: 'development', LOG_FORMAT: 'json' }).logFormat, 'json')
})

test('a request is one short line: time, level, component, method, url, status, duration', async (t) => {
  const { log, lines } = capture('pretty')
  log.child({ component: 'web' }).info('request', { method: 'GET', url: '/api/v1/stats', status: 200, ms: 3.1, request_id: 'r1' })
  await new Promise((r) => setImmediate(r))
  t.regex(lines[0], /^\d\d:\d\d:\d\d info {2}web GET \/api\/v1\/stats 200 3\.1ms$/)
})

test('other events carry their fields as key=value, secrets redacted as in JSON', async (t) => {
  const { log, lines } = capture('pretty')
  log
    .child({ component: 'worker' })
    .warn('alert delivery failed, will retry', { alert_id: 'a1', attempt: 2, url: '/ez?ezkey=secret-key&stat=x' })
  await new Promise((r) => setImmediate(r))
  t.regex(
    lines[0],
    /^\d\d:\d\d:\d\d warn {2}worker alert delivery failed, will retry {2}alert_id=a1 attempt=2 url=\/ez\?ezkey=\[REDACTED\]&stat=x$/,
  )
  t.false(lines[0].includes('secret-key'))
})

test('colour is added only for a terminal', (t) => {
  const info = { level: 'error', message: 'boom', timestamp: '2026-11-23T10:00:00.000Z' }
  t.false(prettyLine(info, false).includes('\x1b['))
  t.true(prettyLine(info, true).includes('\x1b[31m'))
})

test('JSON format stays one JSON object per line', async (t) => {
  const { log, lines } = capture('json')
  log.info('request', { method: 'GET', url: '/x', status: 200, ms: 1 })
  await new Promise((r) => setImmediate(r))
  t.like(JSON.parse(lines[0]), { level: 'info', message: 'request', method: 'GET', status: 200 })
})
