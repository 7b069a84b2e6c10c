// `npm test` compiles every test file once, with everything it imports from the project, into plain
// JavaScript under test-output/compiled/ (esbuild: the same transform tsx applies file by file), and
// ava's processes load that instead of running TypeScript through tsx. Measured on the 2-core machine:
// tsx's loader made each test file's process spend 1.5 to 2 s more CPU importing the service than the
// compiled code takes, about 110 s of CPU over the 69 files; compiling all of them takes about a second.
//
// What stays as it was: packages are not bundled (Node loads them from node_modules as before); every
// module's import.meta.url is its source file's URL, so paths relative to a module (migrations, the web
// client, fixtures) resolve as they do in the sources; source maps send stack traces to the .ts lines;
// test/load-compiled.cjs hands ava the compiled code for the .ts path it asks for, so failures show the
// test file's own lines. The web and worker entry points are compiled too, for the tests that start them
// as processes of their own (test/helpers/processes.ts): each such start saves the same 1.5 to 2 s of CPU.
import { readdirSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, type Plugin } from 'esbuild'

export const COMPILED_DIR = join('test-output', 'compiled')
/** Where the service's entry points go, as `api/server.mjs` and `workers/main.mjs`. */
export const COMPILED_SERVICE_DIR = join(COMPILED_DIR, 'service')
const SERVICE_ENTRIES = ['api/server.ts', 'workers/main.ts']

/**
 * Each module keeps its source's URL as import.meta.url (a bundle would otherwise give every module its own),
 * except a service entry point, which compares its own URL with the script Node was started with.
 */
function sourceUrls(except: string[] = []): Plugin {
  const keep = new Set(except.map((f) => resolve(f)))
  return {
    name: 'source-urls',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8')
        const contents = keep.has(args.path) ? source : source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        return { contents, loader: 'ts' }
      })
    },
  }
}

const COMMON = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // keepNames: class and function names as in the sources (errors are told apart by constructor name).
  keepNames: true,
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
} as const

/**
 * Compiles every test/**\/*.test.ts into COMPILED_DIR, and the service's entry points into COMPILED_SERVICE_DIR
 * (emptied first, so a deleted test leaves nothing behind).
 */
export async function compileTests(): Promise<number> {
  const entryPoints = readdirSync('test', { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join('test', f))
  rmSync(COMPILED_DIR, { recursive: true, force: true })
  await Promise.all([
    build({
      ...COMMON,
      entryPoints,
      outbase: 'test',
      outdir: COMPILED_DIR,
      outExtension: { '.js': '.mjs' },
      splitting: true,
      plugins: [sourceUrls()],
    }),
    build({
      ...COMMON,
      entryPoints: SERVICE_ENTRIES,
      outbase: '.',
      outdir: COMPILED_SERVICE_DIR,
      outExtension: { '.js': '.mjs' },
      plugins: [sourceUrls(SERVICE_ENTRIES)],
    }),
  ])
  return entryPoints.length
}
