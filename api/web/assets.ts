// The web app's JavaScript and CSS, bundled once per process by esbuild on the
// first page request (about a second; API-only processes and tests never pay
// it). Bundling at start-up rather than in `npm run build` keeps one path for
// `npm run dev`, `npm test` and `npm start`: under tsx the entries are the
// TypeScript sources beside this file, under `node dist/` the same modules as
// tsc compiled them. Names carry a content hash, so they are cached for a year.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { APP_CSS } from './styles.js'

export const PAGES = [
  'signin',
  'reset',
  'stats',
  'stat',
  'alerts',
  'alert',
  'ask',
  'anomalies',
  'import',
  'billing',
  'keys',
  'send',
  'account',
  'dashboards',
  'dashboard',
  'correlations',
  'members',
  'audit',
  'invitation',
] as const
export type Page = (typeof PAGES)[number]

export interface Asset {
  body: Buffer
  /** The same bytes gzipped once, for clients that accept it. */
  gzip: Buffer
  type: string
}

export interface Assets {
  /** Hashed URL path of each page's module, and of the stylesheet. */
  script: Record<Page, string>
  css: string
  icon: string
  /** By file name (the part after /assets/). */
  files: Map<string, Asset>
}

const hashed = (name: string, ext: string, body: Buffer) => `${name}-${createHash('sha256').update(body).digest('hex').slice(0, 12)}.${ext}`

async function build(): Promise<Assets> {
  const { build: esbuild } = await import('esbuild')
  const dir = fileURLToPath(new URL('./client/', import.meta.url))
  const entry = (page: string) => [`${dir}${page}.ts`, `${dir}${page}.js`].find(existsSync)
  const entryPoints = Object.fromEntries(PAGES.map((p) => [p, entry(p)]))
  const missing = PAGES.filter((p) => !entryPoints[p])
  if (missing.length) throw new Error(`web app sources missing for ${missing.join(', ')} in ${dir}`)
  const out = await esbuild({
    entryPoints: entryPoints as Record<string, string>,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: '/out',
    logLevel: 'silent',
    legalComments: 'none',
    // Resolve packages where this checkout sees them: a node_modules that is a symlink (shared between
    // checkouts) must not make esbuild read the package.json files above the link's target.
    preserveSymlinks: true,
  })
  const files = new Map<string, Asset>()
  const script = {} as Record<Page, string>
  for (const f of out.outputFiles) {
    const page = f.path.replace(/^.*\/([^/]+)\.js$/, '$1') as Page
    const body = Buffer.from(f.contents)
    const name = hashed(page, 'js', body)
    files.set(name, { body, gzip: gzipSync(body, { level: 9 }), type: 'text/javascript; charset=utf-8' })
    script[page] = `/assets/${name}`
  }
  const require = createRequire(import.meta.url)
  const uplotCss = readFileSync(require.resolve('uplot/dist/uPlot.min.css'))
  const css = Buffer.concat([uplotCss, Buffer.from(APP_CSS)])
  const cssName = hashed('app', 'css', css)
  files.set(cssName, { body: css, gzip: gzipSync(css, { level: 9 }), type: 'text/css; charset=utf-8' })
  const icon = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/><path d="M3 11l3-4 3 2 4-5" fill="none" stroke="#fff" stroke-width="1.6"/></svg>',
  )
  files.set('icon.svg', { body: icon, gzip: gzipSync(icon), type: 'image/svg+xml' })
  return { script, css: `/assets/${cssName}`, icon: '/assets/icon.svg', files }
}

let pending: Promise<Assets> | undefined

/** The bundles, built on first use and shared by every request of this process. */
export function assets(): Promise<Assets> {
  pending ??= build().catch((err) => {
    pending = undefined // a failed build is retried by the next request
    throw err
  })
  return pending
}
