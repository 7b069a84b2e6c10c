// How tests start the service's web and worker processes as processes of their own (fault drills, a
// killed worker): under `npm test` from the entry points test/compile.ts compiled (test/run.ts says
// where), otherwise from the sources through tsx, as `npm run dev` runs them.

/** Set by test/run.ts to the folder holding api/server.mjs and workers/main.mjs. */
export const COMPILED_SERVICE_ENV = 'TEST_COMPILED_SERVICE_DIR'

/** Node's arguments to run `api/server.ts` or `workers/main.ts` (from the project folder). */
export function serviceArgs(entry: 'api/server.ts' | 'workers/main.ts'): string[] {
  const dir = process.env[COMPILED_SERVICE_ENV]
  return dir ? ['--enable-source-maps', `${dir}/${entry.replace(/\.ts$/, '.mjs')}`] : ['--import', 'tsx', entry]
}
