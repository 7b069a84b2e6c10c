// Request and response shapes of the account, session and API-key routes.
import { z } from 'zod'
import { currentZoneName } from '../time/zones.js'
import { PLAN_NAMES } from '../plans.js'

export const Credentials = z
  .object({
    email: z
      .string()
      .trim()
      .max(254)
      .pipe(z.email({ error: 'must be an e-mail address' })),
    password: z.string().min(10, { error: 'must be at least 10 characters' }).max(1024),
  })
  .meta({ id: 'Credentials' })
export type Credentials = z.infer<typeof Credentials>

export const LoginBody = z
  .object({
    email: z.string().max(254),
    password: z.string().max(1024),
    code: z
      .string()
      .max(64)
      .optional()
      .describe('With two-factor sign-in on: the 6-digit code of the authenticator app, or an unused recovery code'),
  })
  .meta({ id: 'LoginBody' })

/**
 * The zones this runtime knows: Intl's canonical list (which leaves out "UTC" itself) and the aliases it
 * resolves to one of them ("Asia/Kolkata", "Etc/UTC"), stored under the name Intl resolves them to.
 */
const ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])
function canonicalZone(name: string): string | null {
  if (ZONES.has(name)) return name
  try {
    const resolved = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone
    return ZONES.has(resolved) ? resolved : null
  } catch {
    return null
  }
}

export const TimeZoneName = z
  .string()
  .trim()
  .max(64, { error: 'must be an IANA time zone such as Europe/Paris' })
  .transform((name, ctx) => {
    const zone = canonicalZone(name)
    // Stored by its current name (Asia/Calcutta -> Asia/Kolkata): the one the zone list offers.
    if (zone) return currentZoneName(zone)
    ctx.issues.push({
      code: 'custom',
      input: name,
      message: `unknown time zone "${name}": must be an IANA time zone such as Europe/Paris or America/New_York`,
    })
    return z.NEVER
  })
  .describe('An IANA time zone name ("Europe/Paris", "America/New_York", "UTC")')

export const PatchAccountBody = z
  .object({
    time_zone: TimeZoneName.nullable().describe(
      'The zone pages draw times in and the question box reads "today" and "last Monday" in; null: each browser\'s own zone',
    ),
  })
  .strict()
  .meta({ id: 'PatchAccountBody' })
export type PatchAccountBody = z.infer<typeof PatchAccountBody>

export const AccountJson = z
  .object({
    id: z.uuid(),
    email: z.string(),
    plan: z.enum(PLAN_NAMES),
    created_at: z.iso.datetime(),
    time_zone: z.string().nullable().describe("The account's IANA time zone; null: each browser uses its own"),
  })
  .meta({ id: 'Account' })

export const AccountResponse = z.object({ account: AccountJson }).meta({ id: 'AccountResponse' })

export const SessionResponse = z
  .object({
    account: AccountJson,
    csrf_token: z.string().optional().describe('Present for a dashboard session: send it in X-Service-CSRF on writes.'),
  })
  .meta({ id: 'SessionResponse' })

export const CreateApiKeyBody = z
  .object({
    label: z.string().trim().min(1, { error: 'must not be empty' }).max(100, { error: 'must be at most 100 characters' }),
    scope: z
      .enum(['write', 'read', 'full'])
      .default('full')
      .describe('write: ingest only (every write route and protocol); read: every GET; full: everything (docs/decisions.md §23)'),
  })
  .meta({ id: 'CreateApiKeyBody' })

export const ApiKeyJson = z
  .object({
    id: z.uuid(),
    label: z.string(),
    prefix: z.string(),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable(),
    scope: z.enum(['write', 'read', 'full']),
    created_by: z.object({ id: z.uuid(), email: z.string().nullable() }).nullable().describe('The person who made the key'),
  })
  .meta({ id: 'ApiKey' })

export const CreatedApiKey = z
  .object({ api_key: ApiKeyJson, key: z.string().describe('The secret. Shown only in this response.') })
  .meta({ id: 'CreatedApiKey' })

export const ApiKeyList = z.object({ api_keys: z.array(ApiKeyJson) }).meta({ id: 'ApiKeyList' })

export const KeyIdParams = z.object({ id: z.uuid() })

const NewPassword = z.string().min(10, { error: 'must be at least 10 characters' }).max(1024)

export const PasswordResetBody = z.object({ email: z.string().trim().max(254) }).meta({ id: 'PasswordResetBody' })
export const PasswordResetAccepted = z
  .object({ status: z.literal('accepted').describe('The same answer whether or not the address has an account') })
  .meta({ id: 'PasswordResetAccepted' })
export const PasswordResetConfirmBody = z
  .object({ token: z.string().max(200).describe('The token of the link in the reset mail'), password: NewPassword })
  .meta({ id: 'PasswordResetConfirmBody' })
export const PasswordResetDone = z
  .object({ account: z.object({ email: z.string() }), sessions_revoked: z.literal(true) })
  .meta({ id: 'PasswordResetDone' })
export const ChangePasswordBody = z
  .object({ current_password: z.string().max(1024), new_password: NewPassword })
  .meta({ id: 'ChangePasswordBody' })
export const DeleteAccountBody = z
  .object({
    password: z.string().max(1024),
    code: z
      .string()
      .trim()
      .max(64)
      .optional()
      .describe('With two-factor sign-in on: a current code of the app, or an unused recovery code'),
  })
  .meta({ id: 'DeleteAccountBody' })
export const DeletionCheck = z
  .object({
    allowed: z.boolean().describe('False while a subscription may still be charged'),
    reason: z.string().nullable().describe('Why not, and what to do'),
    portal_url: z.string().nullable().describe('Where to cancel the subscription'),
    code_required: z.boolean().describe('Two-factor sign-in is on: deleting takes a current code besides the password'),
  })
  .meta({ id: 'DeletionCheck' })

export const TwoFactorStatus = z
  .object({
    enabled: z.boolean(),
    enabled_at: z.iso.datetime().nullable(),
    recovery_codes_left: z.number().int(),
    locked: z
      .boolean()
      .describe("Too many wrong codes in a row: the app's codes are refused until a recovery code is used or the password is reset"),
  })
  .meta({ id: 'TwoFactorStatus' })
export const TwoFactorSetup = z
  .object({
    secret: z.string().describe('Base32 TOTP secret (SHA-1, 6 digits, 30 s), for typing into an authenticator app'),
    otpauth_uri: z.string().describe('The same as an otpauth:// URI (what the QR code holds)'),
    qr_code: z.string().describe('The otpauth:// URI as a QR code: an SVG image as a data: URL, for an <img>'),
  })
  .meta({ id: 'TwoFactorSetup' })
export const TwoFactorCodeBody = z
  .object({
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, { error: 'must be the 6 digits the authenticator app shows' }),
  })
  .meta({ id: 'TwoFactorCodeBody' })
export const RecoveryCodes = z
  .object({
    recovery_codes: z.array(z.string()).describe('Ten one-time codes, each good for one sign-in without the app; shown only here'),
  })
  .meta({ id: 'RecoveryCodes' })
export const TwoFactorDisableBody = z
  .object({ password: z.string().max(1024), code: z.string().trim().max(64).describe('A code of the app, or a recovery code') })
  .meta({ id: 'TwoFactorDisableBody' })
export const RenewRecoveryCodesBody = z
  .object({ code: z.string().trim().min(1).max(64).describe('A code of the app, or a recovery code') })
  .meta({ id: 'RenewRecoveryCodesBody' })
