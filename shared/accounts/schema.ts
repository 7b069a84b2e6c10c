// Request and response shapes of the account, session and API-key routes.
import { z } from 'zod'
import { PLAN_NAMES } from '../plans.js'

export const Credentials = z
  .object({
    email: z.string().trim().max(254).pipe(z.email({ error: 'must be an e-mail address' })),
    password: z.string().min(10, { error: 'must be at least 10 characters' }).max(1024),
  })
  .meta({ id: 'Credentials' })
export type Credentials = z.infer<typeof Credentials>

export const LoginBody = z.object({ email: z.string().max(254), password: z.string().max(1024) }).meta({ id: 'LoginBody' })

export const AccountJson = z
  .object({ id: z.uuid(), email: z.string(), plan: z.enum(PLAN_NAMES), created_at: z.iso.datetime() })
  .meta({ id: 'Account' })

export const SessionResponse = z
  .object({ account: AccountJson, csrf_token: z.string().optional().describe('Present for a dashboard session: send it in X-Service-CSRF on writes.') })
  .meta({ id: 'SessionResponse' })

export const CreateApiKeyBody = z
  .object({ label: z.string().trim().min(1, { error: 'must not be empty' }).max(100, { error: 'must be at most 100 characters' }) })
  .meta({ id: 'CreateApiKeyBody' })

export const ApiKeyJson = z
  .object({ id: z.uuid(), label: z.string(), prefix: z.string(), created_at: z.iso.datetime(), last_used_at: z.iso.datetime().nullable() })
  .meta({ id: 'ApiKey' })

export const CreatedApiKey = z
  .object({ api_key: ApiKeyJson, key: z.string().describe('The secret. Shown only in this response.') })
  .meta({ id: 'CreatedApiKey' })

export const ApiKeyList = z.object({ api_keys: z.array(ApiKeyJson) }).meta({ id: 'ApiKeyList' })

export const KeyIdParams = z.object({ id: z.uuid() })
