// The compaction drill in CI (npm run drills runs it too): the worker killed -9 half-way through a
// compaction pass while single points are backfilled into the days being compacted. Nothing
// accepted or seeded is lost or doubled, and the restarted worker finishes the compaction.
import test from 'ava'
import { COMPACTION_DRILL_SETTINGS, compactionDrill, compactionDrills } from '../../bench/drills/compaction-drill.js'
import { DrillRig } from '../../bench/drills/drills.js'

let rig: DrillRig
test.before(async () => {
  rig = await DrillRig.start({ ...COMPACTION_DRILL_SETTINGS, JOB_LOCK_SECONDS: '5' })
  rig.settleTimeoutMs = 30_000
})
test.after.always(() => rig?.close())

test('compaction-kill', async (t) => {
  t.timeout(240_000)
  const r = await compactionDrill(rig, 'compaction-kill', () => compactionDrills()['compaction-kill'](rig))
  t.log(JSON.stringify(r))
  t.true(r.accepted > 0)
  t.like(r, { lost: 0, duplicated: 0, storedRefused: 0 })
  t.true(r.stored >= r.accepted && r.stored <= r.accepted + r.unknownOutcome)
})
