// Outbound HTTP for alert deliveries (webhook and Slack incoming-webhook URLs).
//
// The URLs are chosen by users, so every request this module makes is a
// potential SSRF: a target could point at the metadata service
// (169.254.169.254), at Redis on 127.0.0.1 or at anything on the private
// network. decisions.md section 8 / issue 5 part 5 set the rules:
//   - http/https only, no credentials in the URL;
//   - refuse loopback, private, link-local, CGNAT, multicast, unspecified,
//     documentation/benchmark and metadata addresses, at create time
//     (checkTarget) and again at every delivery (postJson);
//   - DNS rebinding: a name can resolve to a public address when checked and
//     to 127.0.0.1 a second later. So postJson resolves the name ONCE, checks
//     that answer, and makes the socket connect to exactly that address
//     (http.request's `lookup` hook returns the pinned answer; Host header,
//     TLS SNI and certificate check still use the hostname);
//   - no redirects (a 3xx is returned as-is, i.e. a failed delivery: following
//     it would reach a target that was never checked);
//   - bounded cost: connect timeout, total timeout, response body capped.
// Only WEBHOOK_ALLOW_PRIVATE=1 (callers pass allowPrivate) lifts the address
// rule; the scheme and credential rules always apply.

import dns from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'

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

// Ranges that are not a "public internet host": anything a webhook could use
// to reach us, our neighbours or infrastructure. Documentation/benchmark ranges
// are included because nothing legitimate lives there.
const blocked = new net.BlockList()
for (const [net4, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 connects to localhost on Linux
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, incl. cloud metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. 255.255.255.255 broadcast
] as const) blocked.addSubnet(net4, prefix, 'ipv4')
for (const [net6, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64: the gateway would reach any IPv4, private included
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local (metadata on some clouds: fd00:ec2::254 is in fc00::/7)
  ['fec0::', 10], // deprecated site-local, still routed by some stacks
  ['ff00::', 8], // multicast
] as const) blocked.addSubnet(net6, prefix, 'ipv6')

/** Expands an IPv6 literal (no zone) into 8 16-bit groups; null if malformed. */
function ipv6Groups(ip: string): number[] | null {
  let s = ip
  const tail: number[] = []
  const dotted = s.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/) // embedded dotted quad, e.g. ::ffff:127.0.0.1
  if (dotted) {
    if (!net.isIPv4(dotted[2])) return null
    const [a, b, c, d] = dotted[2].split('.').map(Number)
    tail.push((a << 8) | b, (c << 8) | d)
    s = dotted[1].endsWith('::') ? dotted[1] : dotted[1].slice(0, -1)
  }
  const halves = s.split('::')
  if (halves.length > 2) return null
  const parse = (h: string) => (h === '' ? [] : h.split(':').map((g) => parseInt(g, 16)))
  const head = parse(halves[0])
  const rest = halves.length === 2 ? parse(halves[1]) : []
  const fill = 8 - tail.length - head.length - rest.length
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null
  const groups = [...head, ...Array(halves.length === 2 ? fill : 0).fill(0), ...rest, ...tail]
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null
}

/**
 * True unless `ip` is a public unicast address. IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d) and 6to4 (2002:AABB:CCDD::) forms are judged by
 * the IPv4 address inside, since that is where the packets end up. Anything
 * that is not a valid IP literal (or carries a zone id) counts as private:
 * fail closed.
 */
export function isPrivateAddress(ip: string): boolean {
  if (net.isIPv4(ip)) return blocked.check(ip, 'ipv4')
  if (!net.isIPv6(ip) || ip.includes('%')) return true
  const g = ipv6Groups(ip)
  if (!g) return true
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0)
  if (zeros(5) && (g[5] === 0xffff || g[5] === 0)) return isPrivateAddress(v4(g[6], g[7])) // mapped / compatible (covers :: and ::1 too)
  if (g[0] === 0x2002) return isPrivateAddress(v4(g[1], g[2])) // 6to4
  return blocked.check(ip, 'ipv6')
}

// ---------------------------------------------------------------- targets

interface Target { url: URL; hostname: string; isLiteral: boolean }

/** The static rules: parses the URL and refuses other schemes and embedded credentials. */
function parseTarget(raw: string): Target {
  let url: URL
  try { url = new URL(raw) } catch { throw new EgressRefused('invalid_url', 'not a valid URL') }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EgressRefused('scheme', `scheme ${url.protocol} is not allowed; use http or https`)
  // Credentials would be stored with the alert and sent in clear on http; receivers should use the signature instead.
  if (url.username || url.password) throw new EgressRefused('invalid_url', 'credentials in the URL are not allowed')
  // WHATWG URL already normalises IPv4 shorthands (http://2130706433/, http://0x7f.1/) to dotted form.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (!hostname) throw new EgressRefused('invalid_url', 'URL has no host')
  return { url, hostname, isLiteral: net.isIP(hostname) !== 0 }
}

const defaultLookup: LookupFn = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/** Resolves once and applies the address rule to every answer (a name with one private answer is refused). */
async function resolveTarget(t: Target, allowPrivate: boolean, lookup: LookupFn = defaultLookup): Promise<dns.LookupAddress[]> {
  const addresses = t.isLiteral
    ? [{ address: t.hostname, family: net.isIP(t.hostname) }] // literal: no DNS at all
    : await new Promise<dns.LookupAddress[]>((resolve, reject) =>
        lookup(t.hostname, { all: true }, (err, res) =>
          err || !res?.length ? reject(new EgressRefused('dns', `host ${t.hostname} does not resolve`)) : resolve(res)))
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address))
    if (bad) throw new EgressRefused('private_address', `host ${t.hostname} resolves to a private or internal address (${bad.address})`)
  }
  return addresses
}

/** Checks a URL at alert creation: http/https only, no credentials in the URL, host resolves, and (unless allowPrivate) every resolved address is public. */
export async function checkTarget(url: string, opts: { allowPrivate: boolean; lookup?: LookupFn }): Promise<void> {
  await resolveTarget(parseTarget(url), opts.allowPrivate, opts.lookup)
}

// ---------------------------------------------------------------- delivery

export interface PostOptions {
  allowPrivate: boolean
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
  url: string, body: string, headers: Record<string, string>, opts: PostOptions,
): Promise<{ status: number; body: string }> {
  const target = parseTarget(url)
  const [pinned] = await resolveTarget(target, opts.allowPrivate, opts.lookup)
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
    const connectTimer = setTimeout(() => finish(new EgressFailed('connect_timeout', `could not connect within ${connectTimeoutMs} ms`)), connectTimeoutMs)
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
