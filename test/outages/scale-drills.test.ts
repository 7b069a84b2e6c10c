// The CI share of the drills past one machine (npm run drills runs all three): a Redis Cluster master killed under
// steady writes (its replica takes over), and the PostgreSQL read replica stopped, with 2 web and 2 worker
// processes. No accepted point lost or doubled, every chart and export read answered, the alert that fired during
// the fault delivered exactly once.
import test, { type ExecutionContext } from 'ava'
import { ScaleRig, scaleDrills } from '../../bench/drills/scale.js'

let scale: ScaleRig
test.before(async () => {
  scale = await ScaleRig.start()
  scale.rig.settleTimeoutMs = 30_000
})
test.after.always(() => scale?.close())

const all = scaleDrills()

async function check(t: ExecutionContext, name: string) {
  t.timeout(150_000)
  const r = await scale.drill(name, () => all[name](scale))
  t.log(JSON.stringify(r))
  t.true(r.accepted > 0)
  t.like(r, { lost: 0, duplicated: 0, storedRefused: 0, readsFailed: 0, alertDeliveries: 1 })
  t.true(r.reads > 0)
  t.true(r.stored >= r.accepted && r.stored <= r.accepted + r.unknownOutcome)
}

test.serial('redis-master-kill', (t) => check(t, 'redis-master-kill'))
test.serial('pg-replica-stop', (t) => check(t, 'pg-replica-stop'))
