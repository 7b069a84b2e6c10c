// Account API keys (docs/decisions.md §3): session only.
import { ApiKeyList, CreateApiKeyBody, CreatedApiKey, KeyIdParams } from '../../shared/accounts/schema.js'
import { apiKeyJson, createApiKey, listApiKeys, revokeApiKey } from '../../shared/auth/api-keys.js'
import { invalid, notFound } from '../../shared/errors.js'
import { assertPrintable } from '../../shared/ingest/text.js'
import { roleAtLeast } from '../../shared/members/roles.js'
import { accountOf, personOf } from '../context.js'
import type { Routes } from '../route.js'

export function apiKeyRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'get',
        path: '/api/v1/auth/api-keys',
        role: 'member',
        tag: 'api keys',
        summary: "List the account's API keys (no secrets)",
        auth: ['session'],
        responses: { 200: { description: 'The live keys', schema: ApiKeyList } },
        errors: [403],
      },
      async (ctx) => {
        ctx.body = { api_keys: (await listApiKeys(ctx.deps.sql, accountOf(ctx).id)).map(apiKeyJson) }
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/auth/api-keys',
        tag: 'api keys',
        summary: 'Create a labelled API key; the secret is shown once',
        auth: ['session'],
        body: CreateApiKeyBody,
        responses: { 201: { description: 'The new key and its secret', schema: CreatedApiKey } },
        errors: [403],
      },
      async (ctx, { body }) => {
        assertPrintable(body.label, 'body.label')
        const { apiKey, secret } = await createApiKey(ctx.deps.sql, accountOf(ctx).id, body.label, body.scope, personOf(ctx).id)
        ctx.state.audit = { summary: { after: { label: body.label, scope: body.scope, prefix: apiKeyJson(apiKey).prefix } } }
        ctx.status = 201
        ctx.body = { api_key: apiKeyJson(apiKey), key: secret }
      },
    )
    .add(
      {
        method: 'delete',
        path: '/api/v1/auth/api-keys/:id',
        tag: 'api keys',
        summary: 'Revoke an API key; it stops working within a second',
        auth: ['session'],
        responses: { 204: { description: 'Revoked' } },
        errors: [403, 404],
      },
      async (ctx, { params }) => {
        const id = KeyIdParams.safeParse(params)
        if (!id.success) throw invalid('invalid_id', 'key id must be a UUID')
        // A member revokes only keys they made; owners and admins any of the account's.
        const mine = roleAtLeast(ctx.state.role ?? 'viewer', 'admin') ? undefined : personOf(ctx).id
        const revoked = await revokeApiKey(ctx.deps.sql, accountOf(ctx).id, id.data.id, mine)
        if (!revoked) throw notFound('API key')
        ctx.deps.keys.evict(revoked.id)
        ctx.state.audit = { summary: { before: { label: revoked.label, scope: revoked.scope, prefix: apiKeyJson(revoked).prefix } } }
        ctx.status = 204
      },
    )
}
