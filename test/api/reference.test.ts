// The API reference: the OpenAPI document passes Redocly's recommended rules,
// documents every route the app serves with its parameters, and every error
// code the source can answer with is explained on /docs/problems.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import test from 'ava'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { createRoutes } from '../../api/app.js'
import { generateDocument } from '../../api/openapi.js'
import { PROBLEMS } from '../../shared/problems.js'
import { appSuite } from '../helpers/suite.js'
import { request } from '../helpers/http.js'

const app = appSuite()

type Doc = {
  servers: Array<{ url: string }>
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string
        parameters?: Array<{ name: string; in: string }>
        requestBody?: { content: Record<string, { schema: unknown }> }
      }
    >
  >
}
const fetchDoc = async (base: string) => (await request(base, '/api/v1/openapi.json')).body as Doc

test("the document passes Redocly's recommended rules with no error", async (t) => {
  const doc = await fetchDoc(app.url)
  const config = await createConfig({ extends: ['recommended'] } as never)
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config })
  const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
  t.deepEqual(errors, [])
})

test('every operation has a stable, unique operationId derived from its method and path', async (t) => {
  const doc = await fetchDoc(app.url)
  const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId))
  t.true(
    ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id)),
    'camelCase ids',
  )
  t.is(new Set(ids).size, ids.length, 'unique')
  t.is(doc.paths['/api/v1/stats/{name}'].get.operationId, 'getStatsByName')
  t.is(doc.paths['/ez'].post.operationId, 'postEz')
})

test('servers names the listening address, or PUBLIC_URL when set', async (t) => {
  t.deepEqual((await fetchDoc(app.url)).servers, [{ url: app.url }])
  const other = await app.another({ PUBLIC_URL: 'https://metrics.example.com' })
  t.deepEqual((await fetchDoc(other.url)).servers, [{ url: 'https://metrics.example.com' }])
})

test('every route the app serves is in the document, with its path parameters', (t) => {
  const routes = createRoutes()
  const doc = generateDocument(routes.registry, 'http://x') as unknown as Doc
  // Pages for people (the reference itself) are not API operations; /api/* aliases of the legacy routes are documented once.
  const notApi = (path: string) => path.startsWith('/docs') || /^\/api\/(ez|c|v)$/.test(path)
  const missing: string[] = []
  for (const layer of routes.router.stack) {
    if (typeof layer.path !== 'string' || notApi(layer.path)) continue
    const path = layer.path.replace(/:([A-Za-z_]+)/g, '{$1}')
    for (const method of layer.methods.map((m) => m.toLowerCase()).filter((m) => !['head', 'options'].includes(m))) {
      const op = doc.paths[path]?.[method]
      if (!op) {
        missing.push(`${method} ${path}`)
        continue
      }
      for (const name of layer.paramNames.map((p) => String(p.name))) {
        if (!op.parameters?.some((p) => p.in === 'path' && p.name === name)) missing.push(`${method} ${path}: path parameter ${name}`)
      }
    }
  }
  t.deepEqual(missing, [])
})

test('query parameters and the legacy form fields are documented from their schemas', async (t) => {
  const doc = await fetchDoc(app.url)
  const queryOf = (path: string, method = 'get') =>
    (doc.paths[path][method].parameters ?? [])
      .filter((p) => p.in === 'query')
      .map((p) => p.name)
      .sort()
  t.deepEqual(queryOf('/api/v1/stats/{name}'), ['filter', 'from', 'group_by', 'percentiles', 'range', 'to'])
  for (const name of ['format', 'range', 'from', 'to']) t.true(queryOf('/api/v1/export').includes(name), `export ${name}`)
  t.deepEqual(queryOf('/ez'), ['count', 'email', 'ezkey', 'ikey', 'stat', 't', 'value'])
  const form = (path: string) => Object.keys(formFields(doc, path))
  t.deepEqual(form('/c').sort(), ['count', 'email', 'key', 't', 'ukey'])
  t.deepEqual(form('/v').sort(), ['email', 'key', 't', 'ukey', 'value'])
  t.truthy(doc.paths['/ez'].post.requestBody!.content['application/json'], 'the JSON batch body')
})

/** The properties of a $ref'd form schema. */
function formFields(doc: Doc, path: string): Record<string, unknown> {
  const ref = (doc.paths[path].post.requestBody!.content['application/x-www-form-urlencoded'].schema as { $ref: string }).$ref
  const name = ref.split('/').pop()!
  return (doc as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }).components.schemas[name]
    .properties
}

test('/docs is the bundled viewer under a strict CSP, with every asset served locally', async (t) => {
  const page = await request(app.url, '/docs')
  t.is(page.status, 200)
  const csp = page.headers.get('content-security-policy') ?? ''
  t.regex(csp, /script-src 'self'(;|$)/)
  t.notRegex(csp, /unsafe-inline|unsafe-eval/)
  t.notRegex(page.text, /<script>|<script [^>]*>[^<]/, 'no inline script')
  const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1])
  t.true(assets.some((a) => a.endsWith('swagger-ui-bundle.js')))
  for (const asset of assets) t.is((await request(app.url, asset)).status, 200, asset)
  t.is((await request(app.url, '/docs/assets/nothing.js')).status, 404)
})

/** Error codes thrown anywhere in the service's source. */
function thrownCodes(): Set<string> {
  const codes = new Set<string>()
  const patterns = [
    /\b(?:invalid|forbidden|conflict|quota|reject)(?:<[^>]*>)?\(\s*'([a-z_]+)'/g,
    /new AppError\('[a-z_]+',\s*'([a-z_]+)'/g,
    /\b(?:unauthorized|notFound)\([^()]*(?:\([^()]*\)[^()]*)*,\s*'([a-z_]+)'\)/g,
    /\bcode: '([a-z_]+)'/g,
  ]
  const zodIssueCodes = new Set(['custom']) // ctx.addIssue({ code: 'custom' }): zod's, reported as validation_failed
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (path.endsWith('.ts'))
        for (const re of patterns) for (const m of readFileSync(path, 'utf8').matchAll(re)) if (!zodIssueCodes.has(m[1])) codes.add(m[1])
    }
  }
  for (const dir of ['api', 'shared', 'workers']) walk(dir)
  // Built from the field name in shared/ingest/numbers.ts.
  for (const field of ['count', 'value'])
    for (const code of [`missing_${field}`, `empty_${field}`, `invalid_${field}`, `${field}_out_of_range`]) codes.add(code)
  return codes
}

test('/docs/problems explains every error code the source can answer with', async (t) => {
  const codes = thrownCodes()
  t.true(codes.size > 30, `found ${codes.size} codes`)
  t.deepEqual([...codes].filter((c) => !PROBLEMS[c]).sort(), [], 'codes without an entry in shared/problems.ts')
  const page = await request(app.url, '/docs/problems')
  t.is(page.status, 200)
  for (const code of Object.keys(PROBLEMS)) t.true(page.text.includes(`id="${code}"`), code)
  // A problem body's type links to its entry.
  const res = await request(app.url, '/api/v1/stats/nothing', { bearer: 'not-a-key' })
  t.is(res.body.type, `/docs/problems#${res.body.code}`)
  t.true(page.text.includes(`id="${res.body.code}"`))
})

test('the API reference and the error codes page lead back to the app', async (t) => {
  for (const path of ['/docs', '/docs/problems']) {
    const page = await request(app.url, path)
    t.is(page.status, 200)
    t.regex(page.text, /<a href="\/">← Back to the app<\/a>/, path)
  }
})
