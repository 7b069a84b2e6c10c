// `npm test`: make sure PostgreSQL and Redis answer (starting local ones when
// they do not), build the migrated template database once, then run ava and
// close with one plain summary line ("tests: N passed, N failed").
import { spawn } from 'node:child_process'
import { loadConfig } from '../shared/config.js'
import { ensureServices } from '../shared/services.js'
import { baseUrl, prepareTemplate } from './helpers/db.js'

const config = loadConfig({ DATABASE_URL: baseUrl(), REDIS_URL: process.env.REDIS_URL })
const services = await ensureServices(config, (line) => process.stdout.write(`${line}\n`))
let code = 1
try {
  await prepareTemplate()
  // scrypt (sign-ups) and DNS share libuv's pool, 4 threads by default: many parallel sign-ups starve connects.
  const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)],
    { stdio: ['inherit', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16' } })
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
  ava.stdout.on('data', (c: Buffer) => { process.stdout.write(c); keep(c) })
  ava.stderr.on('data', (c: Buffer) => { process.stderr.write(c); keep(c) })
  code = await new Promise<number>((resolve) => ava.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))))
  const count = (re: RegExp) => Number(re.exec(tail)?.[1] ?? 0)
  passed = Math.max(passed, count(/(\d+) tests? passed/))
  const failed = count(/(\d+) tests? failed/) + count(/(\d+) uncaught exceptions?/) + count(/(\d+) hooks? failed/)
  const skipped = count(/(\d+) tests? skipped/)
  if (code !== 0 && failed === 0) process.stdout.write('\nava exited with an error before reporting failures\n')
  process.stdout.write(`\ntests: ${passed} passed, ${code !== 0 && failed === 0 ? 1 : failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
} finally {
  await services.stop()
}
process.exit(code)
