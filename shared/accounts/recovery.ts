// Account recovery and removal (docs/decisions.md §19): password reset by mail, password change, and
// deleting an account with every piece of its data.
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import { deleteChosenKeys, redisKey } from '../redis.js'
import type { Db, Sql } from '../db.js'
import { AppError, forbidden, invalid } from '../errors.js'
import { sendMail } from '../alerts/mail.js'
import { hashPassword, randomToken, sha256, verifyPassword } from '../auth/secrets.js'
import { revokeAccountSessions } from '../auth/sessions.js'
import { requireSecondFactor, twoFactorOn, unlockTwoFactor } from '../auth/two-factor.js'
import { findAccountByEmail, type Account } from './repo.js'

export const RESET_VALID_HOURS = 1

/**
 * Mails a reset link to the address's account, if there is one. The caller answers the same way either way
 * and does not wait for this (so the answer's timing says nothing about the address either).
 */
export async function requestPasswordReset(config: Config, sql: Db, email: string, baseUrl: string): Promise<void> {
  const found = await findAccountByEmail(sql, email)
  if (!found) return
  const token = randomToken(32)
  await sql`insert into password_resets (token_hash, account_id, expires_at) values (${sha256(token)}, ${found.account.id}, now() + make_interval(hours => ${RESET_VALID_HOURS}))`
  const link = `${baseUrl}/reset?token=${token}`
  await sendMail(config, {
    to: found.account.email,
    subject: 'Reset your password',
    text:
      `Someone (we hope you) asked to reset the password of this account.\n\nChoose a new password with this link, valid for ${RESET_VALID_HOURS} hour and once:\n${link}\n\n` +
      'Every signed-in session will be signed out; API keys keep working. If you did not ask, ignore this mail: nothing changes.',
    link,
  })
}

const refused = () =>
  invalid('reset_token_invalid', 'this reset link is unknown, expired or already used: ask for a new one; nothing was changed')

/** Sets a new password from a reset link: the link is used up, the account's other links too, and every session is revoked. */
export async function confirmPasswordReset(sql: Sql, token: string, password: string, hashCost?: number): Promise<string> {
  const hash = sha256(token)
  // Checked first so that an unknown token costs no password hash; checked again under the update below.
  const [live] = await sql`select 1 from password_resets where token_hash = ${hash} and used_at is null and expires_at > now()`
  if (!live) throw refused()
  const passwordHash = await hashPassword(password, hashCost)
  const accountId = (await sql.begin(async (tx) => {
    const [used] = await tx<{ account_id: string }[]>`
      update password_resets set used_at = now() where token_hash = ${hash} and used_at is null and expires_at > now() returning account_id`
    if (!used) return null // used by a concurrent request meanwhile
    await tx`update accounts set password_hash = ${passwordHash} where id = ${used.account_id}`
    await tx`update password_resets set used_at = now() where account_id = ${used.account_id} and used_at is null`
    await revokeAccountSessions(tx, used.account_id)
    // The mailbox proved the owner: two-factor codes locked by wrong guesses work again.
    await unlockTwoFactor(tx, used.account_id)
    return used.account_id
  })) as string | null
  if (!accountId) throw refused()
  return accountId
}

async function checkPassword(sql: Db, account: Account, password: string, hashCost?: number): Promise<void> {
  const found = await findAccountByEmail(sql, account.email)
  if (!found || !(await verifyPassword(password, found.passwordHash, hashCost)))
    throw forbidden('wrong_password', 'the password is wrong; nothing was changed')
}

/** Changes the password of a signed-in account; its other sessions are revoked (this one stays). */
export async function changePassword(
  sql: Sql,
  account: Account,
  sessionId: string,
  current: string,
  next: string,
  hashCost?: number,
): Promise<void> {
  await checkPassword(sql, account, current, hashCost)
  const passwordHash = await hashPassword(next, hashCost)
  await sql.begin(async (tx) => {
    await tx`update accounts set password_hash = ${passwordHash} where id = ${account.id}`
    await revokeAccountSessions(tx, account.id, sessionId)
    // A reset link mailed before the change would undo it: they go.
    await tx`update password_resets set used_at = now() where account_id = ${account.id} and used_at is null`
  })
}

/** Where a signed-in account manages (and cancels) its subscription. */
export const BILLING_PORTAL_PATH = '/api/billing/portal'

// Subscription states in which the provider may still charge, each with its article and a reader's word for it.
const LIVE_SUBSCRIPTION: Record<string, string> = {
  active: 'an active',
  trialing: 'a trial',
  past_due: 'a past-due',
  unpaid: 'an unpaid',
  incomplete: 'an incomplete',
}

/**
 * Why the account cannot be deleted now (a subscription the provider may still charge), or null. Asked by the
 * account page before it asks "cannot be undone", and again by the deletion itself, first of all its checks.
 */
export async function deletionBlocker(sql: Db, accountId: string): Promise<AppError | null> {
  const [billing] = await sql<
    { status: string | null }[]
  >`select subscription_status as status from billing_customers where account_id = ${accountId}`
  const live = billing?.status ? LIVE_SUBSCRIPTION[billing.status] : undefined
  if (!live) return null
  return new AppError(
    'conflict',
    'subscription_active',
    `the account has ${live} subscription: cancel it in the billing portal first (${BILLING_PORTAL_PATH}), so that nothing is charged after the account is gone; nothing was deleted`,
    { portal_url: BILLING_PORTAL_PATH },
  )
}

/** What deleting the account takes now: refused (why, and where to go), and whether a two-factor code is needed. */
export async function deletionCheck(sql: Db, accountId: string) {
  const blocker = await deletionBlocker(sql, accountId)
  return {
    allowed: blocker === null,
    reason: blocker?.message ?? null,
    portal_url: (blocker?.extra.portal_url as string | undefined) ?? null,
    code_required: await twoFactorOn(sql, accountId),
  }
}

export interface Removed {
  apiKeyIds: string[]
  statNames: string[]
  statIds: string[]
}

/**
 * Deletes the account and every row of its data, in one transaction. Every table of the schema with an
 * `account_id` or a `stat_id` column is cleared of the account's rows by name, found in the catalogue at run
 * time: points and pending rollups hold a stat id without a foreign key (decided for write speed), and a table
 * added later by another feature is covered without this function having to learn of it. The free-tier slot
 * the account claimed is not given back (docs/decisions.md §19). A live paid subscription must be cancelled first
 * (checked before anything else: no password is worth typing while it stands), and with two-factor sign-in on
 * a current code is required besides the password.
 */
export async function deleteAccount(
  sql: Sql,
  account: Account,
  password: string,
  code: string | undefined,
  hashCost?: number,
): Promise<Removed> {
  const blocker = await deletionBlocker(sql, account.id)
  if (blocker) throw blocker
  await checkPassword(sql, account, password, hashCost)
  await requireSecondFactor(sql, account.id, code, 'delete')
  return sql.begin(async (tx) => {
    // The account row locked: no stat (or anything else referencing the account) can be created meanwhile.
    await tx`select id from accounts where id = ${account.id} for update`
    // The stats locked before their points go: a persist transaction holding one FOR KEY SHARE commits first, so
    // its points are visible to the deletes below instead of landing after them (points have no foreign key).
    const stats = await tx<{ id: string; name: string }[]>`select id, name from stats where account_id = ${account.id} for update`
    const keys = await tx<{ id: string }[]>`select id from api_keys where account_id = ${account.id}`
    const tables = await tx<{ table: string; column: 'account_id' | 'stat_id' }[]>`
      select c.table_name as table, c.column_name as column from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
      where c.table_schema = current_schema() and c.column_name in ('account_id', 'stat_id') and c.table_name <> 'accounts'
      order by c.column_name desc, c.table_name`
    const statIds = stats.map((s) => s.id)
    // The provider's events about this account's customer (keyed by the customer, not the account), before the customer row goes.
    await tx`delete from billing_events where customer_id in (select customer_id from billing_customers where account_id = ${account.id})`
    for (const { table, column } of tables) {
      if (column === 'stat_id') {
        if (statIds.length) await tx`delete from ${tx(table)} where stat_id = any(${statIds}::uuid[])`
      } else {
        await tx`delete from ${tx(table)} where account_id = ${account.id}`
      }
    }
    // The rollups' deletes above listed their days for the day-blob builder (sql/0050's triggers: the stats were
    // still there); the stats are gone now, so the list goes too.
    if (statIds.length) await tx`delete from rollup_days_pending where stat_id = any(${statIds}::uuid[])`
    await tx`delete from accounts where id = ${account.id}`
    return { apiKeyIds: keys.map((k) => k.id), statNames: stats.map((s) => s.name), statIds }
  }) as Promise<Removed>
}

/**
 * What Redis holds of a deleted account: its request-rate bucket, its daily point counters, and the
 * idempotency keys (the client's own ikey strings) and replay marks of its stats. All of it expires by itself
 * within a week; this removes it now. One SCAN per pattern over the keyspace: run after the answer.
 */
export async function forgetAccountInRedis(
  redis: Redis,
  config: Pick<Config, 'redisPrefix'>,
  accountId: string,
  statIds: string[],
): Promise<number> {
  const stats = new Set(statIds)
  const statOf = (key: string) => key.slice(config.redisPrefix.length + 1).split(':')[1]
  let n = await redis.unlink(redisKey(config, 'rate', accountId))
  n += await deleteChosenKeys(redis, `${redisKey(config, 'points', accountId)}:*`, () => true)
  if (stats.size) {
    n += await deleteChosenKeys(redis, `${redisKey(config, 'ikey')}:*`, (k) => stats.has(statOf(k)))
    n += await deleteChosenKeys(redis, `${redisKey(config, 'seen')}:*`, (k) => stats.has(statOf(k)))
  }
  return n
}
