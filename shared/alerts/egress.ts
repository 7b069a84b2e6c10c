// Outbound HTTP for alert deliveries (webhook and Slack incoming-webhook URLs).
//
// The URLs are chosen by users, so every request this module makes is a
// potential SSRF: a target could point at the metadata service
// (169.254.169.254), at Redis on 127.0.0.1 or at anything on the private
// network. docs/decisions.md §8 set the rules:
//   - http/https only, no credentials in the URL;
//   - refuse every address that is not global unicast (loopback, private,
//     link-local, CGNAT, multicast, unspecified, documentation, benchmark,
//     metadata, and the IPv6 forms that embed an IPv4 address), classified
//     by ipaddr.js, at create time (checkTarget) and again at every delivery
//     (postJson);
//   - DNS rebinding: a name can resolve to a public address when checked and
//     to 127.0.0.1 a second later. So postJson resolves the name ONCE, checks
//     that answer, and makes the socket connect to exactly that address
//     (http.request's `lookup` hook returns the pinned answer; Host header,
//     TLS SNI and certificate check still use the hostname);
//   - no redirects (a 3xx is returned as-is, i.e. a failed delivery: following
//     it would reach a target that was never checked);
//   - bounded cost: connect timeout, total timeout, response body capped.
// Only WEBHOOK_ALLOW_PRIVATE=1 (callers pass allowPrivate) lifts the address
// rule, and in development loopback is allowed by default (allowLoopback);
// the scheme and credential rules always apply.

import dns from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import ipaddr from 'ipaddr.js'

/** Same shape as `dns.lookup(hostname, { all: true }, cb)`; injectable so tests never need real DNS. */
export type LookupFn = (
  hostname: string,
  options: { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void

export type RefusalCode = 'invalid_url' | 'scheme' | 'private_address' | 'dns'

/** The target is not allowed (or cannot be resolved); no connection was attempted. Maps to 400 at create. */
export class EgressRefused extends Error {
  readonly code: RefusalCode
  constructor(code: RefusalCode, message: string) {
    super(message)
    this.name = 'EgressRefused'
    this.code = code
  }
}

export type FailureCode = 'connect_timeout' | 'timeout' | 'network'

/** The target was allowed but the request did not complete; a delivery retries on this. */
export class EgressFailed extends Error {
  readonly code: FailureCode
  constructor(code: FailureCode, message: string, cause?: unknown) {
    super(message, { cause })
    this.name = 'EgressFailed'
    this.code = code
  }
}

// ---------------------------------------------------------------- addresses

/**
 * The range an address belongs to, as ipaddr.js names it: 'unicast' for a
 * global unicast address, else 'loopback', 'private', 'linkLocal',
 * 'uniqueLocal', 'carrierGradeNat', 'rfc6145', 'teredo', '6to4', 'rfc6052'...
 * The ranges are the library's, kept up to date with IANA's special-purpose
 * registries, not a list of our own. An IPv4-mapped address (::ffff:a.b.c.d,
 * how a dual-stack socket names an IPv4 peer) is judged by the IPv4 address
 * inside. Every other form that embeds an IPv4 address (IPv4-translated
 * ::ffff:0:a.b.c.d, NAT64, 6to4, Teredo, whose client address is inverted)
 * is its own range, not 'unicast', so it is refused whatever it embeds; so is IPv4-compatible ::/96. Null
 * for anything that is not a plain IP literal (a zone id included).
 */
export function addressRange(ip: string): string | null {
  if (!net.isIP(ip) || ip.includes('%')) return null
  let addr = ipaddr.parse(ip)
  if (addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress()) addr = addr.toIPv4Address()
  const range = addr.range()
  // IPv4-compatible (::/96, deprecated by RFC 4291 and absent from the library's ranges, so 'unicast' there):
  // `[::127.0.0.1]` is written `[::7f00:1]` by the URL parser, and some stacks still route it to the IPv4
  // address inside. Never a public target. (:: and ::1 keep their own ranges.)
  if (range === 'unicast' && addr instanceof ipaddr.IPv6 && addr.parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible'
  return range
}

/** True unless `ip` is a global unicast address; anything that is not an IP literal fails closed. */
export function isPrivateAddress(ip: string): boolean {
  return addressRange(ip) !== 'unicast'
}

// ---------------------------------------------------------------- targets

interface Target {
  url: URL
  hostname: string
  isLiteral: boolean
}

/** The static rules: parses the URL and refuses other schemes and embedded credentials. */
function parseTarget(raw: string): Target {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new EgressRefused('invalid_url', 'not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new EgressRefused('scheme', `scheme ${url.protocol} is not allowed; use http or https`)
  // Credentials would be stored with the alert and sent in clear on http; receivers should use the signature instead.
  if (url.username || url.password) throw new EgressRefused('invalid_url', 'credentials in the URL are not allowed')
  // WHATWG URL already normalises IPv4 shorthands (http://2130706433/, http://0x7f.1/) to dotted form.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (!hostname) throw new EgressRefused('invalid_url', 'URL has no host')
  return { url, hostname, isLiteral: net.isIP(hostname) !== 0 }
}

const defaultLookup: LookupFn = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/** Which non-public targets a deployment allows: WEBHOOK_ALLOW_PRIVATE=1 all of them, development loopback by default. */
export interface AddressRule {
  allowPrivate: boolean
  /** Loopback only (127.0.0.0/8, ::1): local receivers in development. */
  allowLoopback?: boolean
}

const allowed = (range: string | null, rule: AddressRule) =>
  rule.allowPrivate || range === 'unicast' || (rule.allowLoopback === true && range === 'loopback')

/** Resolves once and applies the address rule to every answer (a name with one private answer is refused). */
async function resolveTarget(t: Target, rule: AddressRule, lookup: LookupFn = defaultLookup): Promise<dns.LookupAddress[]> {
  const addresses = t.isLiteral
    ? [{ address: t.hostname, family: net.isIP(t.hostname) }] // literal: no DNS at all
    : await new Promise<dns.LookupAddress[]>((resolve, reject) =>
        lookup(t.hostname, { all: true }, (err, res) =>
          err || !res?.length ? reject(new EgressRefused('dns', `host ${t.hostname} does not resolve`)) : resolve(res),
        ),
      )
  const bad = addresses.find((a) => !allowed(addressRange(a.address), rule))
  if (bad) {
    throw new EgressRefused(
      'private_address',
      `host ${t.hostname} resolves to ${bad.address}, a ${addressRange(bad.address) ?? 'non-IP'} address, not a public one; ` +
        'only public targets are allowed (WEBHOOK_ALLOW_PRIVATE=1 lifts this, for development and tests)',
    )
  }
  return addresses
}

/** Checks a URL at alert creation: http/https only, no credentials in the URL, host resolves, and (unless allowPrivate) every resolved address is public. */
export async function checkTarget(url: string, opts: AddressRule & { lookup?: LookupFn }): Promise<void> {
  await resolveTarget(parseTarget(url), opts, opts.lookup)
}

// ---------------------------------------------------------------- delivery

export interface PostOptions extends AddressRule {
  /** TCP connect budget (default 5 s). */
  connectTimeoutMs?: number
  /** Whole request budget from start to the end of the (capped) body (default 10 s). */
  timeoutMs?: number
  /** Response bytes kept; the rest is not read (default 64 KiB). */
  maxResponseBytes?: number
  lookup?: LookupFn
}

/**
 * POSTs a body to the URL: resolve the host ONCE, refuse private/internal addresses (unless allowPrivate),
 * connect to exactly that address (Host header and TLS SNI/certificate check use the hostname), follow no
 * redirects (a 3xx is a failed delivery), connect timeout, total response timeout, response body read up to
 * a cap then dropped. Rejects with EgressRefused (nothing sent) or EgressFailed (retryable).
 * Any status is resolved, including 3xx/4xx/5xx: the caller decides what counts as delivered.
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<{ status: number; body: string }> {
  const target = parseTarget(url)
  const [pinned] = await resolveTarget(target, opts, opts.lookup)
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5_000
  const timeoutMs = opts.timeoutMs ?? 10_000
  const maxBytes = opts.maxResponseBytes ?? 64 * 1024

  // Node calls `lookup` with { all: true } when autoSelectFamily is on (the
  // Node 20 default) and without it otherwise; answer both with the pinned address.
  const pinnedLookup = ((_host: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
    o?.all ? cb(null, [pinned]) : cb(null, pinned.address, pinned.family)) as unknown as net.LookupFunction

  const isHttps = target.url.protocol === 'https:'
  const reqHeaders: Record<string, string | number> = { 'content-type': 'application/json' }
  for (const [k, v] of Object.entries(headers)) {
    // Host must stay the URL's hostname and length must match the body; neither is the caller's to set.
    if (!['host', 'content-length', 'transfer-encoding'].includes(k.toLowerCase())) reqHeaders[k] = v
  }
  reqHeaders['content-length'] = Buffer.byteLength(body)

  return new Promise((resolve, reject) => {
    let settled = false
    const timers: NodeJS.Timeout[] = []
    const finish = (err: Error | null, value?: { status: number; body: string }) => {
      if (settled) return
      settled = true
      timers.forEach(clearTimeout)
      req.destroy() // never keep the socket: no reuse, no further reads
      err ? reject(err) : resolve(value!)
    }

    const req = (isHttps ? https : http).request({
      method: 'POST',
      protocol: target.url.protocol,
      host: target.hostname, // drives the Host header, SNI and the certificate hostname check
      port: target.url.port || (isHttps ? 443 : 80),
      path: target.url.pathname + target.url.search,
      headers: reqHeaders,
      agent: false, // a fresh socket per delivery: a pooled one could be connected elsewhere
      lookup: target.isLiteral ? undefined : pinnedLookup, // literals are connected to directly by Node
      ...(isHttps && !target.isLiteral ? { servername: target.hostname } : {}),
    })

    timers.push(setTimeout(() => finish(new EgressFailed('timeout', `no complete response within ${timeoutMs} ms`)), timeoutMs))
    const connectTimer = setTimeout(
      () => finish(new EgressFailed('connect_timeout', `could not connect within ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    )
    timers.push(connectTimer)
    req.on('socket', (socket) => socket.once('connect', () => clearTimeout(connectTimer)))

    req.on('error', (err) => finish(new EgressFailed('network', `request failed: ${err.message}`, err)))
    req.on('response', (res) => {
      // No redirect handling on purpose: node:http never follows them and the 3xx status is returned.
      const chunks: Buffer[] = []
      let size = 0
      const done = () => finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') })
      res.on('data', (chunk: Buffer) => {
        const room = maxBytes - size
        chunks.push(room < chunk.length ? chunk.subarray(0, room) : chunk)
        size += Math.min(room, chunk.length)
        if (size >= maxBytes) done() // cap reached: stop reading, the rest is dropped with the socket
      })
      res.on('end', done)
      // The peer closed before the end of the body: the delivery is not known to have completed.
      res.on('close', () => finish(new EgressFailed('network', 'connection closed before the response was complete')))
      res.on('error', (err) => finish(new EgressFailed('network', `response failed: ${err.message}`, err)))
    })
    req.end(body)
  })
}
