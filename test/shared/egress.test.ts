// Egress safety for alert deliveries (docs/decisions.md §8).
//
// Ground rule of this file: no traffic ever leaves loopback. Names are resolved
// by injected lookups (never real DNS), private/public-looking addresses are
// only ever *refused* (and the tests assert that no socket was opened), and the
// only receivers contacted listen on 127.0.0.1 or ::1.

import test from 'ava'
import type { ExecutionContext } from 'ava'
import type dns from 'node:dns'
import http from 'node:http'
import net from 'node:net'
import tls from 'node:tls'
import { once } from 'node:events'
import { EgressFailed, EgressRefused, checkTarget, isPrivateAddress, postJson } from '../../shared/alerts/egress.js'
import type { LookupFn, RefusalCode } from '../../shared/alerts/egress.js'

// ------------------------------------------------------------------ helpers

/** An injected resolver: answers from a table (or a sequence per name) and counts calls. */
function fakeLookup(table: Record<string, string[] | string[][]>) {
  const calls: string[] = []
  const lookup: LookupFn = (hostname, _opts, cb) => {
    const n = calls.filter((h) => h === hostname).length
    calls.push(hostname)
    const entry = table[hostname]
    const answer =
      entry === undefined ? undefined : Array.isArray(entry[0]) ? (entry as string[][])[Math.min(n, entry.length - 1)] : (entry as string[])
    if (!answer) {
      const err: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
      return process.nextTick(cb, err, [])
    }
    process.nextTick(
      cb,
      null,
      answer.map((address): dns.LookupAddress => ({ address, family: net.isIP(address) })),
    )
  }
  return { lookup, calls }
}

/**
 * Counts every outgoing socket connect while `fn` runs (net.Socket#connect is
 * what http, https and tls all end in). Only used by serial tests, which ava
 * runs before any concurrent one, so nothing else is connecting meanwhile.
 */
async function countConnects(fn: () => Promise<unknown>): Promise<number> {
  const original = net.Socket.prototype.connect
  let count = 0
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    count++
    return (original as (...a: unknown[]) => net.Socket).apply(this, args)
  } as typeof original
  try {
    await fn()
  } finally {
    net.Socket.prototype.connect = original
  }
  return count
}

interface Seen {
  method?: string
  url?: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A local receiver on loopback recording every request; `handler` answers (default 200 "ok"). */
async function receiver(
  t: ExecutionContext,
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, r) => r.end('ok'),
  host = '127.0.0.1',
) {
  const seen: Seen[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body })
      handler(req, res)
    })
  })
  server.listen(0, host)
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const port = (server.address() as net.AddressInfo).port
  return { seen, port, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` }
}

const open = { allowPrivate: true }
const strict = { allowPrivate: false }

// ------------------------------------------------------------------ isPrivateAddress

test('isPrivateAddress: every internal IPv4 range is private', (t) => {
  for (const ip of [
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '127.1.2.3',
    '169.254.169.254',
    '169.254.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.1',
    '192.0.2.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
  ])
    t.true(isPrivateAddress(ip), ip)
})

test('isPrivateAddress: internal IPv6 ranges and IPv4 embedded in IPv6 are private', (t) => {
  for (const ip of [
    '::',
    '::1',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'febf::1',
    'ff02::1',
    '2001:db8::1',
    '64:ff9b::a00:1',
    '64:ff9b::808:808',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    '0:0:0:0:0:ffff:7f00:0001',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::',
    // IPv4-translated (::ffff:0:0/96) and Teredo (client 127.0.0.1, inverted), and every
    // other form that embeds an IPv4 address, whatever it embeds: only global unicast is allowed.
    '::ffff:0:7f00:1',
    '::ffff:0:127.0.0.1',
    '::ffff:0:808:808',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001::1',
    '2002:808:808::1',
    '64:ff9b:1::1',
    '2001:2::1',
    '100::1',
    'fec0::1',
    '5f00::1',
    // IPv4-compatible (::/96), as the URL parser writes [::127.0.0.1], whatever it embeds.
    '::7f00:1',
    '::a00:1',
    '::a9fe:a9fe',
    '::808:808',
    '::1:0',
    '0:0:0:0:0:0:8.8.8.8',
  ])
    t.true(isPrivateAddress(ip), ip)
})

test('isPrivateAddress: public addresses are not private, boundaries included', (t) => {
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '2001:4860:4860::8888',
  ])
    t.false(isPrivateAddress(ip), ip)
})

test('isPrivateAddress: anything that is not an IP literal fails closed', (t) => {
  for (const s of ['', 'localhost', 'example.com', '1.2.3', '999.1.1.1', 'fe80::1%eth0', '[::1]']) t.true(isPrivateAddress(s), s)
})

// ------------------------------------------------------------------ refusals (serial: they assert no socket was opened)

const refusedLiterals = [
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://127.0.0.1:6379/',
  'http://0.0.0.0/',
  'http://2130706433/', // 127.0.0.1 spelled as a number; WHATWG URL normalises it
  'https://0x7f.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[::ffff:0:7f00:1]/',
  'http://[::ffff:0:127.0.0.1]/',
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
]

for (const url of refusedLiterals) {
  test.serial(`refuses private literal ${url} at create and at delivery, without DNS or a socket`, async (t) => {
    const { lookup, calls } = fakeLookup({})
    const sockets = await countConnects(async () => {
      const a = await t.throwsAsync(checkTarget(url, { ...strict, lookup }), { instanceOf: EgressRefused })
      t.is(a!.code, 'private_address')
      const b = await t.throwsAsync(postJson(url, '{}', {}, { ...strict, lookup }), { instanceOf: EgressRefused })
      t.is(b!.code, 'private_address')
    })
    t.is(sockets, 0)
    t.deepEqual(calls, [], 'a literal IP is checked without DNS')
  })
}

test.serial('refuses a name that resolves to 127.0.0.1, and a metadata name that resolves to link-local', async (t) => {
  const { lookup, calls } = fakeLookup({ 'evil.example': ['127.0.0.1'], 'metadata.google.internal': ['169.254.169.254'] })
  const sockets = await countConnects(async () => {
    for (const url of ['http://evil.example/hook', 'https://metadata.google.internal/computeMetadata/v1/']) {
      t.is((await t.throwsAsync(checkTarget(url, { ...strict, lookup }), { instanceOf: EgressRefused }))!.code, 'private_address')
      t.is((await t.throwsAsync(postJson(url, '{}', {}, { ...strict, lookup }), { instanceOf: EgressRefused }))!.code, 'private_address')
    }
  })
  t.is(sockets, 0)
  t.is(calls.length, 4)
})

test.serial('refuses a name when any one of its addresses is private', async (t) => {
  const { lookup } = fakeLookup({ 'mixed.example': ['8.8.8.8', '10.1.2.3'] })
  const sockets = await countConnects(async () => {
    t.is(
      (await t.throwsAsync(checkTarget('https://mixed.example/', { ...strict, lookup }), { instanceOf: EgressRefused }))!.code,
      'private_address',
    )
    t.is(
      (await t.throwsAsync(postJson('https://mixed.example/', '{}', {}, { ...strict, lookup }), { instanceOf: EgressRefused }))!.code,
      'private_address',
    )
  })
  t.is(sockets, 0)
})

test.serial('DNS rebinding: public at create, private at delivery is refused at delivery, before any socket', async (t) => {
  const { lookup, calls } = fakeLookup({ 'rebind.example': [['8.8.8.8'], ['127.0.0.1']] })
  await t.notThrowsAsync(checkTarget('http://rebind.example/', { ...strict, lookup })) // checkTarget never connects
  const sockets = await countConnects(async () => {
    const err = await t.throwsAsync(postJson('http://rebind.example/', '{}', {}, { ...strict, lookup }), { instanceOf: EgressRefused })
    t.is(err!.code, 'private_address')
  })
  t.is(sockets, 0)
  t.is(calls.length, 2, 'one lookup at create, one per delivery')
})

test.serial('rejected schemes and credentials are refused before anything else', async (t) => {
  const { lookup, calls } = fakeLookup({ 'hooks.example': ['8.8.8.8'] })
  const cases: Array<[string, RefusalCode]> = [
    ['ftp://hooks.example/x', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://hooks.example:6379/_x', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['https://user:pass@hooks.example/x', 'invalid_url'],
    ['https://user@hooks.example/x', 'invalid_url'],
    ['not a url', 'invalid_url'],
    ['', 'invalid_url'],
  ]
  const sockets = await countConnects(async () => {
    for (const [url, code] of cases) {
      for (const allowPrivate of [false, true]) {
        t.is((await t.throwsAsync(checkTarget(url, { allowPrivate, lookup }), { instanceOf: EgressRefused }))!.code, code, url)
        t.is((await t.throwsAsync(postJson(url, '{}', {}, { allowPrivate, lookup }), { instanceOf: EgressRefused }))!.code, code, url)
      }
    }
  })
  t.is(sockets, 0)
  t.deepEqual(calls, [])
})

test.serial('a host that does not resolve is refused with code dns', async (t) => {
  const { lookup } = fakeLookup({ 'empty.example': [] })
  const sockets = await countConnects(async () => {
    for (const url of ['https://nxdomain.example/', 'https://empty.example/']) {
      t.is((await t.throwsAsync(checkTarget(url, { ...open, lookup }), { instanceOf: EgressRefused }))!.code, 'dns')
      t.is((await t.throwsAsync(postJson(url, '{}', {}, { ...open, lookup }), { instanceOf: EgressRefused }))!.code, 'dns')
    }
  })
  t.is(sockets, 0)
})

test.serial('allowPrivate lifts only the address rule', async (t) => {
  const { lookup } = fakeLookup({ 'evil.example': ['127.0.0.1'] })
  const sockets = await countConnects(async () => {
    await t.notThrowsAsync(checkTarget('http://10.0.0.1/', open))
    await t.notThrowsAsync(checkTarget('http://169.254.169.254/', open))
    await t.notThrowsAsync(checkTarget('http://[::1]:8080/', open))
    await t.notThrowsAsync(checkTarget('http://evil.example/', { ...open, lookup }))
    t.is((await t.throwsAsync(checkTarget('ftp://10.0.0.1/', open)))!.name, 'EgressRefused')
    t.is((await t.throwsAsync(checkTarget('http://a:b@127.0.0.1/', open)))!.name, 'EgressRefused')
  })
  t.is(sockets, 0, 'checkTarget never connects')
})

// ------------------------------------------------------------------ delivery against local receivers

test('delivers the POST with body and headers to a local receiver and returns its status', async (t) => {
  const r = await receiver(t, (_q, res) => {
    res.statusCode = 202
    res.end('accepted')
  })
  const body = JSON.stringify({ event: 'fired', value: 42, name: 'ünïcode' })
  const res = await postJson(`${r.url}/hooks/a?x=1`, body, { 'X-Service-Signature': 't=1,v1=ab', 'X-Service-Idempotency-Key': 'k1' }, open)
  t.deepEqual(res, { status: 202, body: 'accepted' })
  t.is(r.seen.length, 1)
  const [seen] = r.seen
  t.is(seen.method, 'POST')
  t.is(seen.url, '/hooks/a?x=1')
  t.is(seen.body, body)
  t.is(seen.headers['content-type'], 'application/json')
  t.is(seen.headers['content-length'], String(Buffer.byteLength(body)))
  t.is(seen.headers['x-service-signature'], 't=1,v1=ab')
  t.is(seen.headers['x-service-idempotency-key'], 'k1')
  t.is(seen.headers.host, `127.0.0.1:${r.port}`)
})

test('non-2xx statuses are returned, not thrown', async (t) => {
  const r = await receiver(t, (_q, res) => {
    res.statusCode = 503
    res.end('down')
  })
  t.deepEqual(await postJson(r.url, '{}', {}, open), { status: 503, body: 'down' })
})

test('the caller cannot override Host or Content-Length', async (t) => {
  const r = await receiver(t)
  await postJson(r.url, '{"a":1}', { Host: 'internal.example', 'Content-Length': '1' }, open)
  t.is(r.seen[0].headers.host, `127.0.0.1:${r.port}`)
  t.is(r.seen[0].body, '{"a":1}')
})

test('a name is resolved once and the connection goes to that address, with the hostname as Host', async (t) => {
  const r = await receiver(t)
  // A second resolution would answer 127.0.0.2, where nothing listens (still loopback, so a bug cannot leak traffic).
  const { lookup, calls } = fakeLookup({ 'hook.test': [['127.0.0.1'], ['127.0.0.2']] })
  const res = await postJson(`http://hook.test:${r.port}/x`, '{}', {}, { ...open, lookup })
  t.is(res.status, 200)
  t.deepEqual(calls, ['hook.test'])
  t.is(r.seen[0].headers.host, `hook.test:${r.port}`)
})

test('https: TLS SNI carries the hostname while the socket goes to the pinned address', async (t) => {
  let sni: string | undefined
  // No certificate at all: the handshake fails right after the ClientHello, which is all we need to see.
  const server = tls.createServer({
    SNICallback: (name, cb) => {
      sni = name
      cb(new Error('no certificate here'), undefined)
    },
  })
  server.on('tlsClientError', () => {})
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const { lookup, calls } = fakeLookup({ 'secure.test': [['127.0.0.1'], ['127.0.0.2']] })
  const err = await t.throwsAsync(postJson(`https://secure.test:${port}/`, '{}', {}, { ...open, lookup }), { instanceOf: EgressFailed })
  t.is(err!.code, 'network')
  t.is(sni, 'secure.test')
  t.deepEqual(calls, ['secure.test'])
})

test('an IPv6 loopback receiver is reachable with allowPrivate', async (t) => {
  const r = await receiver(t, undefined, '::1')
  t.is((await postJson(`${r.url}/v6`, '{"v":6}', {}, open)).status, 200)
  t.is(r.seen[0].body, '{"v":6}')
})

test('a 302 is returned as 302 and not followed', async (t) => {
  const target = await receiver(t)
  const r = await receiver(t, (_q, res) => {
    res.writeHead(302, { location: `${target.url}/stolen` })
    res.end()
  })
  const res = await postJson(r.url, '{"secret":1}', {}, open)
  t.is(res.status, 302)
  await new Promise((ok) => setTimeout(ok, 100))
  t.is(r.seen.length, 1)
  t.is(target.seen.length, 0, 'the redirect target received nothing')
})

test('a receiver that never answers hits the total timeout', async (t) => {
  const r = await receiver(t, () => {}) // reads the request, never responds
  // The code says which bound ended it (timeout, not the receiver's close); how soon is not asserted on a loaded machine.
  const err = await t.throwsAsync(postJson(r.url, '{}', {}, { ...open, timeoutMs: 300 }), { instanceOf: EgressFailed })
  t.is(err!.code, 'timeout')
  t.is(r.seen.length, 1)
})

test('a body that trickles forever also hits the total timeout', async (t) => {
  let timer: NodeJS.Timeout | undefined
  t.teardown(() => clearInterval(timer))
  const r = await receiver(t, (_q, res) => {
    res.writeHead(200)
    timer = setInterval(() => res.write('.'), 20)
  })
  // The code says which bound ended it (timeout, not the receiver's close); how soon is not asserted on a loaded machine.
  const err = await t.throwsAsync(postJson(r.url, '{}', {}, { ...open, timeoutMs: 300 }), { instanceOf: EgressFailed })
  t.is(err!.code, 'timeout')
})

test('a huge (endless) response body is capped and the rest dropped', async (t) => {
  let written = 0
  const chunk = Buffer.alloc(16 * 1024, 'a')
  const r = await receiver(t, (_q, res) => {
    res.writeHead(200)
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) written += chunk.length
      if (!res.destroyed) res.once('drain', pump)
    }
    res.on('error', () => {})
    pump()
  })
  const res = await postJson(r.url, '{}', {}, open)
  t.is(res.status, 200)
  t.is(res.body.length, 64 * 1024)
  const small = await postJson(r.url, '{}', {}, { ...open, maxResponseBytes: 1000 })
  t.is(small.body, 'a'.repeat(1000))
  t.true(written < 64 * 1024 * 1024, 'the receiver was not read to any end')
})

test('a closed port fails quickly', async (t) => {
  const probe = net.createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const port = (probe.address() as net.AddressInfo).port
  await new Promise((ok) => probe.close(ok))
  const err = await t.throwsAsync(postJson(`http://127.0.0.1:${port}/`, '{}', {}, { ...open, connectTimeoutMs: 5_000 }), {
    instanceOf: EgressFailed,
  })
  t.is(err!.code, 'network')
  // Refused, not timed out: the 5 s connect timeout was not what ended it.
  t.is((err!.cause as NodeJS.ErrnoException).code, 'ECONNREFUSED')
})

test.serial('allowLoopback (development) allows loopback only; every refusal names WEBHOOK_ALLOW_PRIVATE', async (t) => {
  const dev = { allowPrivate: false, allowLoopback: true }
  await t.notThrowsAsync(checkTarget('http://127.0.0.1:8080/', dev))
  await t.notThrowsAsync(checkTarget('http://[::1]:8080/', dev))
  await t.notThrowsAsync(checkTarget('http://[::ffff:127.0.0.1]:8080/', dev))
  const sockets = await countConnects(async () => {
    for (const url of [
      'http://10.0.0.1/',
      'http://169.254.169.254/',
      'http://[::ffff:0:7f00:1]/',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    ]) {
      const err = await t.throwsAsync(checkTarget(url, dev), { instanceOf: EgressRefused })
      t.is(err!.code, 'private_address', url)
      t.regex(err!.message, /WEBHOOK_ALLOW_PRIVATE=1/, url)
    }
    const strictErr = await t.throwsAsync(postJson('http://127.0.0.1:9/', '{}', {}, strict), { instanceOf: EgressRefused })
    t.is(
      strictErr!.message,
      'host 127.0.0.1 resolves to 127.0.0.1, a loopback address, not a public one; only public targets are allowed (WEBHOOK_ALLOW_PRIVATE=1 lifts this, for development and tests)',
    )
  })
  t.is(sockets, 0)
})
