// Sign-up and sign-in: the rules around accounts that are more than one query.
import type { Db } from '../db.js'
import { conflict, unauthorized } from '../errors.js'
import { hashPassword, verifyPassword } from '../auth/secrets.js'
import type { PlanName } from '../plans.js'
import { findAccountByEmail, insertAccount, type Account } from './repo.js'

/** Creates an account with a password (hashed at `hashCost`, config.passwordHashCost); a taken e-mail (any case) is a 409. */
export async function signUp(
  sql: Db,
  email: string,
  password: string | null,
  plan: PlanName = 'free',
  hashCost?: number,
): Promise<Account> {
  const account = await insertAccount(sql, email, password === null ? null : await hashPassword(password, hashCost), plan)
  if (!account) throw conflict('email_taken', 'an account with this e-mail already exists')
  return account
}

/** Checks credentials; one message for an unknown e-mail and a wrong password (which costs as much as a sign-up's hash). */
export async function logIn(sql: Db, email: string, password: string, hashCost?: number): Promise<Account> {
  const found = await findAccountByEmail(sql, email)
  const ok = await verifyPassword(password, found?.passwordHash, hashCost)
  if (!found || !ok) throw unauthorized('wrong e-mail or password', 'bad_credentials')
  return found.account
}

/** Records a sign-in (the members page shows each member's last). */
export async function markSignIn(sql: Db, personId: string): Promise<void> {
  await sql`update accounts set last_sign_in_at = now() where id = ${personId}`
}
