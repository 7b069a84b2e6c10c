// ava's settings for `npm test` (test/run.ts passes --config): package.json's "ava" section, which `npx ava`
// reads directly, with three changes.
//
// The test files run compiled (test/compile.ts, before ava starts): ava requires each by its .ts path and
// test/load-compiled.cjs answers with the compiled module, instead of tsx compiling in every process.
//
// The order files start in: ava runs two files at a time on this 2-core machine in
// path order, which left the slowest files (browser journeys, fault drills, real workers waiting on
// schedules) for last, one of them running alone at the end while the other core idled. Starting the
// slowest first lets the many short files fill in around them. The list is measured wall time per file
// (longest first, about 15 s and up); a file missing from it only starts later, a stale entry only costs time.
import { readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

const SLOWEST_FIRST = [
  'web/anomalies',
  'web/stat-page',
  'web/alerts',
  'outages/drills',
  'web/keys-account',
  'api/legacy',
  'workers/alert-delivery',
  'web/first-point',
  'web/import',
  'web/ask',
  'api/import',
  'workers/worker-crash',
  'web/billing',
  'api/quotas',
  'api/legacy-batch',
  'api/alerts',
  'outages/postgres-outage',
  'api/stats-read',
  'api/analytics',
  'api/writes-v1',
  'api/auth-throttle',
  'outages/health-progress',
]

const rank = (file) => {
  const i = SLOWEST_FIRST.findIndex((name) => file.endsWith(`/test/${name}.test.ts`))
  return i < 0 ? SLOWEST_FIRST.length : i
}

// The TimescaleDB path (test/timescale/) runs only on request, `npm run test:timescale` (TEST_TIMESCALE=1): it is
// tested through a personal PGlite build bundling TimescaleDB, not a TimescaleDB server, and plain PostgreSQL is
// the supported store (docs/decisions.md §D-6). package.json's files leave it out; this puts it back alone.
const TIMESCALE = process.env.TEST_TIMESCALE === '1'

export default {
  ...pkg.ava,
  ...(TIMESCALE ? { files: ['test/timescale/**/*.test.ts'] } : {}),
  extensions: { ts: 'commonjs' },
  nodeArguments: ['--require=./test/load-compiled.cjs'],
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
}
