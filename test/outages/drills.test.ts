// The CI share of the fault drills (npm run drills runs them all, with 20-second
// outages): a worker killed three times, and PostgreSQL down for 5 seconds,
// under steady writes through two web processes on every write path. No accepted point lost or
// duplicated, nothing refused stored, and the service healthy again within seconds.
import test, { type ExecutionContext } from 'ava'
import { DrillRig, drills, runDrill } from '../../bench/drills/drills.js'

let rig: DrillRig
test.before(async () => {
  // A killed worker's jobs come back once its lock lapses: 5 s instead of 15, well inside the settle limit below.
  rig = await DrillRig.start({ JOB_LOCK_SECONDS: '5' })
  // In CI a drill that has not settled by then has failed. Alone a drill settles in under 10 s; with the whole suite's
  // files starting beside it and four write paths queued behind a 5 s outage, 20 s was once too short (199 jobs waiting).
  rig.settleTimeoutMs = 40_000
})
test.after.always(() => rig?.close())

const all = drills(5)

async function check(t: ExecutionContext, name: string) {
  t.timeout(90_000)
  // One result per write path: single writes with and without t and ikey, /ez and /api/v1/points batches.
  for (const r of await runDrill(rig, name, all[name])) {
    t.log(JSON.stringify(r))
    t.true(r.accepted > 0, r.path)
    t.like(r, { lost: 0, duplicated: 0, misplaced: 0, storedRefused: 0 }, r.path)
    // Beyond the accepted points, only writes whose outcome the client never learned may be stored.
    t.true(r.stored >= r.accepted && r.stored <= r.accepted + r.unknownOutcome, r.path)
    t.true(r.recoverySeconds < 10, `healthy ${r.recoverySeconds} s after the fault ended`)
  }
}

test.serial('worker-kill', (t) => check(t, 'worker-kill'))

// The worker's persist statements run without a client-side transaction (shared/points/repo.ts): postgres.js 3.4.9
// wedges a connection whose server goes away inside sql.begin() (porsager/postgres#1208, #1209, #1215), which left
// this drill's worker stuck whenever the stop caught a persist transaction in flight.
test.serial('postgres-outage', (t) => check(t, 'postgres-outage'))
