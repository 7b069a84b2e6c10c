// Import of a saved export file (docs/decisions.md §I-4.6.2, §9 and §15).
import { z } from 'zod'
import { notFound } from '../../shared/errors.js'
import { findImport, importJson } from '../../shared/imports/repo.js'
import { MAX_IMPORT_BYTES } from '../../shared/imports/rows.js'
import { ImportJson, ImportPreview, ImportQuery, ImportUpload } from '../../shared/imports/schema.js'
import { previewImport, startImport } from '../../shared/imports/service.js'
import { accountOf, type AuthKind } from '../context.js'
import type { Routes } from '../route.js'
import { readUpload } from '../upload.js'

const nowSeconds = () => Math.floor(Date.now() / 1000)

export function importRoutes(routes: Routes): void {
  const common = { tag: 'import', auth: ['bearer', 'session'] as AuthKind[], rateLimited: true }
  routes
    .add(
      {
        ...common,
        method: 'post',
        path: '/api/v1/import/legacy',
        query: ImportQuery,
        errors: [403, 413, 415, 429, 503],
        summary: "Import a saved export file (the predecessor's or this service's); ?dryRun=1 previews it",
        upload: { schema: ImportUpload, mediaTypes: ['application/json', 'text/csv', 'multipart/form-data'] },
        responses: {
          200: { description: 'dryRun=1: what the import would do; nothing is written', schema: ImportPreview },
          202: { description: 'Accepted: the import runs as a job; follow it at GET /api/v1/import/legacy/{id}', schema: ImportJson },
        },
      },
      async (ctx, { query }) => {
        const file = await readUpload(ctx, MAX_IMPORT_BYTES)
        const dryRun = query.dryRun === '1' || query.dryRun === 'true'
        if (dryRun) {
          ctx.body = await previewImport(ctx.deps, accountOf(ctx), file, { kind: query.kind }, nowSeconds())
          return
        }
        const started = await startImport(ctx.deps, accountOf(ctx), file, { kind: query.kind }, nowSeconds())
        ctx.status = 202
        ctx.set('Location', `/api/v1/import/legacy/${started.id}`)
        ctx.body = { import: started }
      },
    )
    .add(
      {
        ...common,
        method: 'get',
        path: '/api/v1/import/legacy/:id',
        errors: [404, 429],
        summary: "An import's progress: queued, running, completed or failed, with its counts",
        responses: { 200: { description: 'The import', schema: ImportJson } },
      },
      async (ctx, { params }) => {
        // Not a UUID: no import has that id (404, like another account's id).
        const row = z.uuid().safeParse(params.id).success ? await findImport(ctx.deps.sql, accountOf(ctx).id, params.id) : null
        if (!row) throw notFound('import', 'import_not_found')
        ctx.body = { import: importJson(row) }
      },
    )
}
