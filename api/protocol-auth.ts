// The account key as the protocols' own clients send it (docs/decisions.md §21): `Authorization: Token <key>`
// (InfluxDB 2.x), `Bearer <key>` (Prometheus, and accepted everywhere), HTTP Basic with the key as the
// password (InfluxDB 1.x clients, Telegraf's username/password), or 1.x's `?u=&p=<key>` query.
import { unauthorized } from '../shared/errors.js'
import type { Account } from '../shared/accounts/repo.js'
import type { Ctx } from './context.js'
import { forbiddenScope, keyRole, scopeAllows } from './middleware/auth.js'
import { enforceRate } from './middleware/rate-limit.js'

const MISSING = 'missing credentials: send Authorization: Token <API key> (or Bearer), or the key as the password'

function presentedKey(ctx: Ctx, allowQuery: boolean): string | undefined {
  const header = ctx.get('authorization')
  if (header) {
    const m = /^(Token|Bearer|Basic)\s+(\S+)\s*$/i.exec(header)
    if (!m) return ''
    if (m[1].toLowerCase() !== 'basic') return m[2]
    const decoded = Buffer.from(m[2], 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    return colon === -1 ? '' : decoded.slice(colon + 1)
  }
  const p = allowQuery ? ctx.query.p : undefined
  return typeof p === 'string' ? p : undefined
}

/**
 * The account behind the presented key, with one request taken from its rate; 401 when none or unknown. `use`:
 * the protocol's writes (write and full keys, the member role) or its reads (the Prometheus query API: read and
 * full keys, the viewer role, whatever the HTTP method: Grafana sends its queries as POST forms).
 */
export async function protocolAccount(ctx: Ctx, allowQuery: boolean, use: 'write' | 'read' = 'write'): Promise<Account> {
  const key = presentedKey(ctx, allowQuery)
  if (key === undefined) throw unauthorized(MISSING)
  const known = key ? ctx.deps.keys.cached(key) : null
  const resolved = known === undefined ? await ctx.deps.keys.resolve(key!) : known
  if (!resolved) throw unauthorized('invalid API key')
  if (use === 'write') {
    // Ingest routes: write and full keys may call them, read keys not; writing takes the member role.
    if (!scopeAllows(resolved.scope, 'POST', true)) throw forbiddenScope(resolved.scope)
    keyRole(resolved.role, 'member')
  } else {
    if (!scopeAllows(resolved.scope, 'GET', false)) throw forbiddenScope(resolved.scope)
    keyRole(resolved.role, 'viewer')
  }
  ctx.state.keyScope = resolved.scope
  ctx.state.account = resolved.account
  ctx.state.apiKeyId = resolved.keyId
  ctx.state.authKind = 'bearer'
  const wait = enforceRate(ctx, resolved.account)
  if (wait) await wait
  return resolved.account
}
