// `npm run test:cluster [files...]`: the suite's queue, write and limit tests against a Redis Cluster of 3 masters
// and 3 replicas started here (test/helpers/redis-cluster.ts), through the same runner as `npm test`
// (test/run.ts) with REDIS_URL=redis+cluster://... Without files it runs CLUSTER_FILES. CI runs it after npm test.
import { spawn } from 'node:child_process'
import { startRedisCluster } from '../helpers/redis-cluster.js'

/** The files whose subject is the queue, the write path, idempotency, limits, throttles and the workers. */
export const CLUSTER_FILES = [
  'test/api/writes-v1.test.ts',
  'test/api/legacy.test.ts',
  'test/api/legacy-batch.test.ts',
  'test/api/concurrency.test.ts',
  'test/api/quotas.test.ts',
  'test/api/auth-throttle.test.ts',
  'test/api/health.test.ts',
  'test/api/stat-admin.test.ts',
  'test/shared/limits.test.ts',
  'test/shared/metrics.test.ts',
  'test/workers/persist-points.test.ts',
  'test/workers/parked-points.test.ts',
  'test/workers/alert-delivery.test.ts',
]

const say = (line: string) => process.stdout.write(`${line}\n`)
const files = process.argv.slice(2)
const cluster = await startRedisCluster()
say(`test:cluster: Redis Cluster of 3 masters and 3 replicas at ${cluster.url}`)
let code = 1
try {
  const child = spawn(process.execPath, ['--import=tsx', 'test/run.ts', ...(files.length ? files : CLUSTER_FILES)], {
    stdio: 'inherit',
    env: { ...process.env, REDIS_URL: cluster.url },
  })
  code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)))
} finally {
  await cluster.destroy()
}
process.exit(code)
