import { StatsdIntake } from './shared/ingest/protocols/statsd-intake.ts'
const account = { id: 'a1', plan: 'business' } as any
let written = 0
const intake = new StatsdIntake({
  ingest: { writeMany: async (_a: any, pts: any[]) => { written += pts.length; return { accepted: pts.length, duplicates: 0 } } } as any,
  keys: { resolve: async () => ({ account, keyId: 'k' }) } as any,
  limits: { takeRequest: async () => ({ allowed: true }) } as any,
  redis: { pipeline: () => ({ incrby() { return this }, expire() { return this }, exec: async () => [] }) } as any,
  config: { redisPrefix: 'x' }, log: { warn() {} } as any,
})
const key = 'mk_abcdefghijkl_abcdefghijklmnopqrstuvwxyz012345'
const lines = Array.from({ length: 8 }, (_, k) => `${key}.bench.statsd.${k}:1|c`)
for (let round = 0; round < 3; round++) {
  const n = 200_000
  const t0 = performance.now()
  for (let i = 0; i < n; i++) void intake.packet(lines[i & 7])
  await new Promise((r) => setTimeout(r, 100))
  await intake.flush()
  console.log(((performance.now() - t0 - 100) * 1000 / n).toFixed(2), 'µs/packet', written)
}
process.exit(0)
