// `npm test`: make sure PostgreSQL and Redis answer (starting local ones when
// they do not), build the migrated template database once, compile the test
// files (test/compile.ts), start the Chromium the browser files share, then
// run ava and close with one plain summary line ("tests: N passed, N failed").
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { loadConfig, readEnvFile } from '../shared/config.js'
import { ensureServices } from '../dev/services.js'
import { redisHosts } from '../shared/redis-url.js'
import { COMPILED_DIR, COMPILED_SERVICE_DIR, compileTests } from './compile.js'
import { COMPILED_SERVICE_ENV } from './helpers/processes.js'
import type { BrowserServer } from 'playwright-core'
import { baseUrl, prepareTemplate, TEMPLATE } from './helpers/db.js'

const say = (line: string) => process.stdout.write(`${line}\n`)
if (readEnvFile()) say('tests: read .env')
const config = loadConfig({ DATABASE_URL: baseUrl(), REDIS_URL: process.env.REDIS_URL })
say(`tests: checking PostgreSQL (${new URL(config.databaseUrl).host}) and Redis (${redisHosts(config.redisUrl)})`)
const services = await ensureServices(config, say)
let code = 1
let launching: Promise<BrowserServer | undefined> | undefined
try {
  const files = process.argv.slice(2).filter((a) => !a.startsWith('-'))
  // test/timescale/ runs alone and only under `npm run test:timescale` (test/ava.config.mjs).
  const timescale = process.env.TEST_TIMESCALE === '1'
  // One Chromium for every browser file (test/helpers/browser.ts), started while the template is checked. A
  // failure to start it is not fatal here: each browser file then launches its own, and reports why it cannot.
  const needsBrowser = (!files.length && !timescale) || files.some((f) => /(^|\/)web(\/|$)/.test(f))
  const shared = needsBrowser ? await import('./helpers/browser.js') : undefined
  launching = shared?.launchSharedBrowser().catch((err: Error) => {
    say(`tests: no shared Chromium (${err.message.split('\n')[0]})`)
    return undefined
  })
  const started = Date.now()
  await prepareTemplate()
  say(`tests: template database ${TEMPLATE} ready (${Date.now() - started} ms); it is kept to make the next run start fast.`)
  say('       Each test file clones it into a database of its own, dropped when the file ends.')
  say(`       To remove the template: psql -c 'drop database "${TEMPLATE}"' (a changed migration builds a new one).`)
  const compiling = Date.now()
  const compiled = await compileTests()
  say(`tests: compiled ${compiled} test files with what they import into ${COMPILED_DIR}/ (${Date.now() - compiling} ms); ava runs those`)
  const browser = await launching
  const fileCount =
    files.length ||
    readdirSync('test', { recursive: true }).filter(
      (f) => String(f).endsWith('.test.ts') && String(f).startsWith('timescale/') === timescale,
    ).length
  say(`tests: running ${fileCount} test files with ava; each line below is one finished test (file › test)\n`)
  // scrypt (sign-ups) and DNS share libuv's pool, 4 threads by default: many parallel sign-ups starve connects.
  const ava = spawn(
    process.execPath,
    ['node_modules/ava/entrypoints/cli.mjs', '--config', 'test/ava.config.mjs', ...process.argv.slice(2)],
    {
      stdio: ['inherit', 'pipe', 'pipe'],
      env: {
        ...process.env,
        FORCE_COLOR: '0',
        UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16',
        [COMPILED_SERVICE_ENV]: COMPILED_SERVICE_DIR,
        ...(browser && shared ? { [shared.SHARED_BROWSER_ENV]: browser.wsEndpoint() } : {}),
      },
    },
  )
  // ava prints its "N tests passed" only when nothing failed, so passes are counted line by line.
  let tail = ''
  let passed = 0
  let pending = ''
  const keep = (chunk: Buffer) => {
    const text = pending + chunk.toString('utf8')
    const lines = text.split('\n')
    pending = lines.pop() ?? ''
    passed += lines.filter((l) => /^\s*✔/.test(l)).length
    tail = (tail + chunk.toString('utf8')).slice(-4000)
  }
  ava.stdout.on('data', (c: Buffer) => {
    process.stdout.write(c)
    keep(c)
  })
  ava.stderr.on('data', (c: Buffer) => {
    process.stderr.write(c)
    keep(c)
  })
  code = await new Promise<number>((resolve) => ava.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))))
  const count = (re: RegExp) => Number(re.exec(tail)?.[1] ?? 0)
  passed = Math.max(passed, count(/(\d+) tests? passed/))
  const failed = count(/(\d+) tests? failed/) + count(/(\d+) uncaught exceptions?/) + count(/(\d+) hooks? failed/)
  const skipped = count(/(\d+) tests? skipped/)
  if (code !== 0 && failed === 0) process.stdout.write('\nava exited with an error before reporting failures\n')
  process.stdout.write(
    `\ntests: ${passed} passed, ${code !== 0 && failed === 0 ? 1 : failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
  )
} finally {
  await (await launching)?.close()
  await services.stop()
}
process.exit(code)
