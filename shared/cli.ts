// Operator command line: `npm run cli -- <command> [--flags]`.
//   accounts:create --email E [--plan P] [--password P]   prints {account, api_key}
//   accounts:set-plan --email E --plan P
//   accounts:list
//   accounts:two-factor-off --email E   for someone who lost both the authenticator app and the recovery codes
//   points:parked [--limit N]   points the persist worker parked (PostgreSQL refused them), newest first
import { parseArgs } from 'node:util'
import { findAccountByEmail, listAccounts, setAccountPlan } from './accounts/repo.js'
import { accountJson } from './accounts/json.js'
import { signUp } from './accounts/service.js'
import { createApiKey } from './auth/api-keys.js'
import { revokeAccountSessions } from './auth/sessions.js'
import { turnOffTwoFactor } from './auth/two-factor.js'
import { loadConfigOrExit } from './config.js'
import { createSql, type Sql } from './db.js'
import { AppError } from './errors.js'
import { markHistoryForScoring } from './anomalies/sweep.js'
import { DETECTING_PLANS, isPlanName, PLAN_NAMES } from './plans.js'
import { listParked } from './points/parked.js'

const USAGE = `usage: npm run cli -- accounts:create --email E [--plan ${PLAN_NAMES.join('|')}] [--password P]
       npm run cli -- accounts:set-plan --email E --plan P
       npm run cli -- accounts:list
       npm run cli -- accounts:two-factor-off --email E
       npm run cli -- points:parked [--limit N]`

class UsageError extends Error {}

function plan(value: string | undefined, fallback?: string) {
  const p = value ?? fallback
  if (!p || !isPlanName(p)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`)
  return p
}

async function run(sql: Sql, argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { email: { type: 'string' }, plan: { type: 'string' }, password: { type: 'string' }, limit: { type: 'string' } },
  })
  const command = positionals[0]
  switch (command) {
    case 'accounts:create': {
      if (!values.email) throw new UsageError('--email is required')
      // Without --password the account has none: it signs in only with its API key until one is set.
      const account = await signUp(sql, values.email, values.password ?? null, plan(values.plan, 'free'), config.passwordHashCost)
      const { apiKey, secret } = await createApiKey(sql, account.id, 'created by cli')
      return { account: accountJson(account), api_key: { id: apiKey.id, label: apiKey.label, key: secret } }
    }
    case 'accounts:set-plan': {
      if (!values.email) throw new UsageError('--email is required')
      const found = await findAccountByEmail(sql, values.email)
      if (!found) throw new UsageError(`no account with e-mail ${values.email}`)
      const updated = await setAccountPlan(sql, found.account.id, plan(values.plan))
      // Into anomaly detection from a plan without it: the history written meanwhile is scored.
      if (!DETECTING_PLANS.includes(found.account.plan) && DETECTING_PLANS.includes(updated!.plan))
        await markHistoryForScoring(sql, found.account.id, new Date())
      return { account: accountJson(updated!) }
    }
    case 'accounts:list':
      return { accounts: (await listAccounts(sql)).map(accountJson) }
    case 'accounts:two-factor-off': {
      // The way back for someone who lost the app and every recovery code: an operator, after checking who asks.
      if (!values.email) throw new UsageError('--email is required')
      const found = await findAccountByEmail(sql, values.email)
      if (!found) throw new UsageError(`no account with e-mail ${values.email}`)
      await turnOffTwoFactor(sql, found.account.id)
      return {
        account: accountJson(found.account),
        two_factor: false,
        sessions_revoked: await revokeAccountSessions(sql, found.account.id),
      }
    }
    case 'points:parked': {
      const limit = Number(values.limit ?? 100)
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer')
      return { parked_points: await listParked(sql, limit) }
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'no command given')
  }
}

const config = loadConfigOrExit()
const sql = createSql(config.databaseUrl, { max: 1, applicationName: 'metrics-cli', statementTimeoutSeconds: 0 })
try {
  process.stdout.write(`${JSON.stringify(await run(sql, process.argv.slice(2)), null, 2)}\n`)
} catch (err) {
  if (err instanceof UsageError) process.stderr.write(`${err.message}\n${USAGE}\n`)
  else if (err instanceof AppError) process.stderr.write(`${err.message}\n`)
  else process.stderr.write(`${(err as Error).stack}\n`)
  process.exitCode = err instanceof UsageError ? 64 : 1
} finally {
  await sql.end({ timeout: 2 })
}
