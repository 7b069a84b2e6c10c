// Alert e-mail through SMTP (nodemailer), and the double opt-in: an address
// gets a confirmation link first, and nothing else until it is clicked.
// Without SMTP_URL outside production (decisions.md 15), each mail is written
// to the outbox folder as an .eml file instead, and its link printed.
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { Config } from '../config.js'
import type { Db } from '../db.js'
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
