// `npm test`: make sure PostgreSQL and Redis answer (starting local ones when
// they do not), build the migrated template database once, then run ava.
import { spawn } from 'node:child_process'
import { loadConfig } from '../shared/config.js'
import { ensureServices } from '../shared/services.js'
import { baseUrl, prepareTemplate } from './helpers/db.js'

const config = loadConfig({ DATABASE_URL: baseUrl(), REDIS_URL: process.env.REDIS_URL })
const services = await ensureServices(config, (line) => process.stdout.write(`${line}\n`))
let code = 1
try {
  await prepareTemplate()
  const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)], { stdio: 'inherit' })
  code = await new Promise<number>((resolve) => ava.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))))
} finally {
  await services.stop()
}
process.exit(code)
