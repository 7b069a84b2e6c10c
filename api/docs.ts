// The human API reference: /docs renders the OpenAPI document with Swagger UI
// (served from our own origin, no CDN, under a CSP that allows only our own
// scripts), and /docs/problems explains every error `code` the API answers with.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { ERROR_STATUS } from '../shared/errors.js'
import { esc } from '../shared/html.js'
import { PROBLEMS } from '../shared/problems.js'
import type { Ctx } from './context.js'
import type { Routes } from './route.js'

export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** `code` spans in the catalogue's prose. */
const prose = (s: string) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>')

const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
const ASSETS: Record<string, { type: string; body: () => Buffer | string }> = {
  'swagger-ui-bundle.js': {
    type: 'application/javascript; charset=utf-8',
    body: cached(() => readFileSync(join(swaggerDir, 'swagger-ui-bundle.js'))),
  },
  'swagger-ui.css': { type: 'text/css; charset=utf-8', body: cached(() => readFileSync(join(swaggerDir, 'swagger-ui.css'))) },
  'docs.css': { type: 'text/css; charset=utf-8', body: () => DOCS_CSS },
  'init.js': {
    type: 'application/javascript; charset=utf-8',
    body: () =>
      "window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: true, tryItOutEnabled: false, defaultModelsExpandDepth: 0 })\n",
  },
}

function cached(load: () => Buffer): () => Buffer {
  let value: Buffer | undefined
  return () => (value ??= load())
}

const DOCS_CSS = `body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1f2328}
.top{padding:1rem 1.5rem;border-bottom:1px solid #d0d7de;display:flex;gap:1.5rem;align-items:baseline;flex-wrap:wrap}
.top h1{font-size:1.25rem;margin:0}.top a{color:#0969da}
main{max-width:60rem;margin:0 auto;padding:1rem 1.5rem 3rem}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:.05rem .3rem;border-radius:3px}
section{border-top:1px solid #d0d7de;padding:.75rem 0}section:target{background:#fff8c5}
h2{font-size:1rem;margin:.25rem 0}.status{color:#57606a;font-weight:normal;margin-left:.5rem}
dl{margin:.25rem 0;display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{color:#57606a}dd{margin:0}`

function shell(title: string, body: string, scripts: string[] = [], styles: string[] = []): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title>${[...styles, 'docs.css'].map((s) => `<link rel="stylesheet" href="/docs/assets/${s}">`).join('')}</head>
<body><header class="top"><a href="/">← Back to the app</a><h1>${esc(title)}</h1><a href="/docs">API reference</a><a href="/docs/problems">Error codes</a><a href="/api/v1/openapi.json">OpenAPI document</a></header>
${body}${scripts.map((s) => `<script src="/docs/assets/${s}"></script>`).join('')}</body></html>`
}

function problemsPage(): string {
  const sections = Object.entries(PROBLEMS).map(
    ([
      code,
      d,
    ]) => `<section id="${esc(code)}"><h2><code>${esc(code)}</code><span class="status">${d.kind === 'internal' ? 500 : ERROR_STATUS[d.kind]}</span></h2>
<dl><dt>Meaning</dt><dd>${prose(d.meaning)}</dd><dt>What to do</dt><dd>${prose(d.action)}</dd></dl></section>`,
  )
  return shell(
    'Error codes',
    `<main><p>Every error of the v1 API is a problem-details body (RFC 9457) whose <code>code</code> is one of these and whose <code>type</code> links here. The legacy routes (<code>/ez</code>, <code>/c</code>, <code>/v</code>) answer the same cases in their envelope's <code>msg</code>.</p>${sections.join('\n')}</main>`,
  )
}

function html(ctx: Ctx, body: string): void {
  ctx.type = 'html'
  ctx.set('Content-Security-Policy', DOCS_CSP)
  ctx.body = body
}

export function docsRoutes(routes: Routes): void {
  const { router } = routes
  const problems = problemsPage()
  router.get('/docs', (ctx) =>
    html(
      ctx,
      shell('API reference', '<div id="reference">Loading the reference…</div>', ['swagger-ui-bundle.js', 'init.js'], ['swagger-ui.css']),
    ),
  )
  router.get('/docs/problems', (ctx) => html(ctx, problems))
  router.get('/docs/assets/:file', (ctx) => {
    const asset = ASSETS[ctx.params.file]
    if (!asset) return
    ctx.type = asset.type
    ctx.set('Cache-Control', 'public, max-age=3600')
    ctx.body = asset.body()
  })
}
