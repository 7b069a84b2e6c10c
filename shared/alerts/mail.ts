// Alert e-mail through SMTP (nodemailer), and the double opt-in: an address
// gets a confirmation link first, and nothing else until it is clicked.
import nodemailer from 'nodemailer'
import type { Config } from '../config.js'
import type { Db } from '../db.js'
import { randomToken, sha256 } from '../auth/secrets.js'

export interface Mail {
  to: string
  subject: string
  text: string
}

/** Sends one mail; throws when SMTP is not configured or refuses it. */
export async function sendMail(config: Pick<Config, 'smtpUrl' | 'mailFrom'>, mail: Mail): Promise<void> {
  if (!config.smtpUrl) throw new Error('SMTP_URL is not set')
  const transport = nodemailer.createTransport(config.smtpUrl)
  try {
    await transport.sendMail({ from: config.mailFrom, ...mail })
  } finally {
    transport.close()
  }
}

export async function isConfirmed(sql: Db, accountId: string, email: string): Promise<boolean> {
  const [row] = await sql<{ ok: boolean }[]>`
    select confirmed_at is not null as ok from email_confirmations where account_id = ${accountId} and lower(email) = lower(${email})`
  return row?.ok ?? false
}

/** Starts (or restarts) the opt-in for an address; returns the token for the link, or null when already confirmed. */
export async function startConfirmation(sql: Db, accountId: string, email: string): Promise<string | null> {
  const token = randomToken(24)
  const rows = await sql`
    insert into email_confirmations (account_id, email, token_hash) values (${accountId}, ${email.toLowerCase()}, ${sha256(token)})
    on conflict (account_id, email) do update set token_hash = excluded.token_hash, created_at = now()
      where email_confirmations.confirmed_at is null
    returning 1`
  return rows.length ? token : null
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
