// Alert e-mail through SMTP (nodemailer), and the double opt-in: an address
// gets a confirmation link first, and nothing else until it is clicked.
// Without SMTP_URL outside production (docs/decisions.md §15), each mail is written
// to the outbox folder as an .eml file instead, and its link printed.
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { Config } from '../config.js'
import type { Db, Sql } from '../db.js'
import { AppError, unavailable } from '../errors.js'
import { randomToken, sha256 } from '../auth/secrets.js'

export interface Mail {
  to: string
  subject: string
  text: string
  /** The link the mail asks its reader to follow; printed when the mail goes to the development outbox. */
  link?: string
}

type MailConfig = Pick<Config, 'smtpUrl' | 'mailFrom' | 'mailOutboxDir'>

/** Whether this deployment can send mail at all (SMTP, or the development outbox). */
export function canSendMail(config: MailConfig): boolean {
  return Boolean(config.smtpUrl || config.mailOutboxDir)
}

/** Sends one mail; throws when no way to send is configured or SMTP refuses it. */
export async function sendMail(config: MailConfig, mail: Mail): Promise<void> {
  const { link: _link, ...message } = mail
  if (!config.smtpUrl) {
    if (!config.mailOutboxDir) throw new Error('SMTP_URL is not set')
    return writeToOutbox(config.mailOutboxDir, config.mailFrom, mail)
  }
  const transport = nodemailer.createTransport(config.smtpUrl)
  try {
    await transport.sendMail({ from: config.mailFrom, ...message })
  } finally {
    transport.close()
  }
}

/** Writes the mail as an .eml file (RFC 5322, as SMTP would carry it) and prints where, with its link. */
export async function writeToOutbox(dir: string, from: string, mail: Mail): Promise<void> {
  const { link, ...message } = mail
  const built = await nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }).sendMail({ from, ...message })
  await mkdir(dir, { recursive: true })
  const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`)
  await writeFile(file, built.message as Buffer)
  // Printed rather than logged: the logger masks tokens in URLs, and in development following this link is the point.
  process.stdout.write(`mail to ${mail.to} written to ${file}${link ? `\n  open: ${link}` : ''}\n`)
}

export async function isConfirmed(sql: Db, accountId: string, email: string): Promise<boolean> {
  const [row] = await sql<{ ok: boolean }[]>`
    select confirmed_at is not null as ok from email_confirmations where account_id = ${accountId} and lower(email) = lower(${email})`
  return row?.ok ?? false
}

/**
 * How often confirmation mails go out (creating and deleting an e-mail alert in a loop
 * mailed a third party's address each time). An address with a confirmation pending is not mailed again
 * for CONFIRMATION_PENDING_HOURS: the link it was sent arms every alert of that account to it. Beyond that,
 * within any day an address gets confirmation mails from at most CONFIRMATIONS_PER_ADDRESS accounts, and
 * an account sends at most CONFIRMATIONS_PER_ACCOUNT of them.
 */
export const CONFIRMATION_PENDING_HOURS = 24
export const CONFIRMATIONS_PER_ADDRESS = 3
export const CONFIRMATIONS_PER_ACCOUNT = 10

export type Confirmation =
  | { status: 'confirmed' }
  /** A confirmation mail went to the address within the pending window: no new one. */
  | { status: 'pending'; sentAt: Date }
  /** A new confirmation: mail `token`'s link (cancelConfirmation if the mail cannot go). */
  | { status: 'new'; token: string }

/**
 * Starts the opt-in for an address, unless it is confirmed or already pending; throws a 429 when the
 * address or the account has had its day's confirmation mails. Decided under locks on the account and
 * the address, so concurrent requests (several processes) cannot both pass a limit or both mail.
 */
export async function startConfirmation(sql: Sql, accountId: string, email: string): Promise<Confirmation> {
  const address = email.toLowerCase()
  return sql.begin(async (tx) => {
    // Always the account, then the address: two requests never wait on each other in opposite orders.
    await tx`select pg_advisory_xact_lock(hashtextextended(${accountId}, 24))`
    await tx`select pg_advisory_xact_lock(hashtextextended(${address}, 24))`
    const [row] = await tx<{ confirmed: boolean; pending: boolean; created_at: Date }[]>`
      select confirmed_at is not null as confirmed, created_at > now() - make_interval(hours => ${CONFIRMATION_PENDING_HOURS}) as pending, created_at
      from email_confirmations where account_id = ${accountId} and email = ${address}`
    if (row?.confirmed) return { status: 'confirmed' as const }
    if (row?.pending) return { status: 'pending' as const, sentAt: row.created_at }
    const [counts] = await tx<{ address: number; account: number }[]>`
      select (select count(*) from email_confirmations where email = ${address} and created_at > now() - interval '1 day')::int as address,
             (select count(*) from email_confirmations where account_id = ${accountId} and created_at > now() - interval '1 day')::int as account`
    if (counts.address >= CONFIRMATIONS_PER_ADDRESS) {
      throw throttled(
        'confirmation_mail_throttled',
        `too many confirmation mails to ${address} today (at most ${CONFIRMATIONS_PER_ADDRESS} accounts a day may ask it); nothing was stored, try again tomorrow`,
      )
    }
    if (counts.account >= CONFIRMATIONS_PER_ACCOUNT) {
      throw throttled(
        'confirmation_mail_throttled',
        `this account has sent its ${CONFIRMATIONS_PER_ACCOUNT} confirmation mails for today; nothing was stored, try again tomorrow or use an address already confirmed`,
      )
    }
    const token = randomToken(24)
    await tx`
      insert into email_confirmations (account_id, email, token_hash) values (${accountId}, ${address}, ${sha256(token)})
      on conflict (account_id, email) do update set token_hash = excluded.token_hash, created_at = now()`
    return { status: 'new' as const, token }
  }) as Promise<Confirmation>
}

function throttled(code: string, message: string): AppError {
  const err = new AppError('rate_limited', code, message)
  err.retryAfter = 3600
  return err
}

/**
 * Starts the opt-in for an address (startConfirmation) and, when it is new, mails the confirmation link that names
 * the alert's stat. When the mail cannot go, the confirmation is forgotten (so the next try mails again) and a 503
 * thrown. Used by alert creation and by a PATCH that changes the address.
 */
export async function mailConfirmation(
  config: MailConfig,
  sql: Sql,
  accountId: string,
  email: string,
  statName: string,
  baseUrl: string,
): Promise<Confirmation> {
  const confirmation = await startConfirmation(sql, accountId, email)
  // Pending: the mail sent earlier arms this alert too; the address is not mailed again.
  if (confirmation.status !== 'new') return confirmation
  const link = `${baseUrl}/api/v1/email/confirm?token=${confirmation.token}`
  try {
    await sendMail(config, {
      to: email,
      subject: 'Confirm alert e-mails',
      text: `An account asked to send alerts for "${statName}" to this address.\n\nConfirm with this link:\n${link}\n\nIgnore this mail and nothing will be sent.`,
      link,
    })
  } catch (err) {
    await cancelConfirmation(sql, accountId, confirmation.token).catch(() => {})
    throw unavailable(`could not send the confirmation e-mail: ${(err as Error).message}`)
  }
  return confirmation
}

/** Forgets a confirmation whose mail could not be sent, so that the next try mails it again. */
export async function cancelConfirmation(sql: Db, accountId: string, token: string): Promise<void> {
  await sql`delete from email_confirmations where account_id = ${accountId} and token_hash = ${sha256(token)} and confirmed_at is null`
}

/** Confirms the address behind a token and arms its pending alerts; false for an unknown token. */
export async function confirmEmail(sql: Db, token: string): Promise<boolean> {
  const [row] = await sql<{ account_id: string; email: string }[]>`
    update email_confirmations set confirmed_at = coalesce(confirmed_at, now()) where token_hash = ${sha256(token)}
    returning account_id, email`
  if (!row) return false
  await sql`update alerts set state = 'ok' where account_id = ${row.account_id} and state = 'pending_confirmation'
    and channel = 'email' and lower(channel_config->>'email') = ${row.email}`
  return true
}
