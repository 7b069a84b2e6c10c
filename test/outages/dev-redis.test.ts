// The Redis that `npm run dev` (and `npm test`) starts when none answers runs with AOF in .data/redis.
import test from 'ava'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { ensureServices, projectRoot } from '../../dev/services.js'
import { baseUrl } from '../helpers/db.js'
import { closedPort } from '../helpers/http.js'

test('the Redis started for development persists with AOF under .data/redis', async (t) => {
  const port = await closedPort()
  const lines: string[] = []
  const services = await ensureServices({ databaseUrl: baseUrl(), redisUrl: `redis://127.0.0.1:${port}` }, (l) => lines.push(l))
  try {
    t.deepEqual(services.started, ['redis'])
    const redis = new Redis(`redis://127.0.0.1:${port}`)
    const info = await redis.info('persistence')
    redis.disconnect()
    t.regex(info, /^aof_enabled:1/m)
    const dir = join(projectRoot(), '.data', 'redis')
    t.true(lines.some((l) => l.includes(`AOF in ${dir}`)))
    t.true(existsSync(join(dir, 'appendonlydir')))
  } finally {
    await services.stop()
  }
})
