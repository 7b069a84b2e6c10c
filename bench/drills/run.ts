// `npm run drills [name ...] [--outage-seconds N]`: runs the fault drills
// (bench/drills/drills.ts) against a PostgreSQL and a Redis started here, and
// prints accepted, stored, lost, duplicated, misplaced and unknown-outcome
// counts per drill and write path (single writes with t and ikey, single writes
// with neither, /ez JSON batches, /api/v1/points batches; backfill-burst writes
// DRILL_BACKFILL_POINTS points, default a million). Bounded: each drill settles within a minute (plus a second per 5,000 points
// written) or fails, and the whole run stops after 25 minutes. Exit code 1 when any accepted point was lost or
// duplicated, or a refused one stored. A Redis restarted empty has lost what it
// held: points accepted and not yet persisted at the wipe are counted apart
// (lostInWipe, with how long before the wipe their accepted attempt was sent), not as a failure.
// Then the drills past one machine (bench/drills/scale.ts) on a Redis Cluster and a PostgreSQL primary with a
// streaming replica, which also fail on an unanswered read or an alert transition not delivered exactly once.
// Then backup-restore (test/drills/backup-restore.ts): a base backup and WAL archive restored to a recovery point
// into fresh servers; `lost` there is a point acknowledged before the recovery point missing after the restore.
import { DrillRig, drills, runDrill, type DrillResult } from './drills.js'
import { ScaleRig, scaleDrills, type ScaleDrillResult } from './scale.js'
import { COMPACTION_DRILL_SETTINGS, compactionDrill, compactionDrills } from './compaction-drill.js'
import { BackupRig, backupRestoreDrills } from './backup-restore.js'

const args = process.argv.slice(2)
const flag = args.indexOf('--outage-seconds')
const outageSeconds = flag >= 0 ? Number(args.splice(flag, 2)[1]) : 20
const all = drills(outageSeconds)
const scale = scaleDrills()
const compaction = compactionDrills()
const backup = backupRestoreDrills()
const names = args.length ? args : [...Object.keys(all), ...Object.keys(scale), ...Object.keys(compaction), ...Object.keys(backup)]
for (const n of names)
  if (!all[n] && !scale[n] && !compaction[n] && !backup[n]) {
    process.stderr.write(
      `unknown drill ${n}; drills: ${[...Object.keys(all), ...Object.keys(scale), ...Object.keys(compaction), ...Object.keys(backup)].join(', ')}\n`,
    )
    process.exit(64)
  }

const bound = setTimeout(() => {
  process.stderr.write('drills: 25-minute bound reached, stopping\n')
  process.exit(2)
}, 25 * 60_000)
bound.unref()

const results: Array<DrillResult & Partial<ScaleDrillResult>> = []
let failed = false
/** Runs the named drills of one kind on a rig started for them (none when no drill of that kind is named). */
async function runOn<R extends { close(): Promise<void> }, D>(
  kind: Record<string, D>,
  start: () => Promise<R>,
  drill: (rig: R, name: string, d: D) => Promise<DrillResult | DrillResult[]>,
) {
  const mine = names.filter((n) => kind[n])
  if (!mine.length) return
  const rig = await start()
  try {
    for (const name of mine) {
      process.stdout.write(`drill ${name} ...\n`)
      try {
        const started = Date.now()
        const rs = [await drill(rig, name, kind[name])].flat()
        results.push(...rs)
        for (const r of rs) process.stdout.write(`  ${JSON.stringify(r)}\n`)
        process.stdout.write(`  ${name}: ${Math.round((Date.now() - started) / 1000)} s\n`)
      } catch (err) {
        failed = true
        process.stdout.write(`  FAILED: ${(err as Error).message}\n`)
      }
    }
  } finally {
    await rig.close()
  }
}
await runOn(all, () => DrillRig.start(), runDrill)
await runOn(
  scale,
  () => ScaleRig.start(),
  (rig, name, fault) => rig.drill(name, () => fault(rig)),
)
await runOn(
  compaction,
  () => DrillRig.start(COMPACTION_DRILL_SETTINGS),
  (rig, name, fault) => compactionDrill(rig, name, () => fault(rig)),
)
await runOn(
  backup,
  () => BackupRig.start(),
  (rig, _name, drill) => drill(rig),
)
const cols = [
  'drill',
  'path',
  'sent',
  'accepted',
  'stored',
  'lost',
  'lostInWipe',
  'wipeWindowMs',
  'duplicated',
  'misplaced',
  'storedRefused',
  'unknownOutcome',
  'recoverySeconds',
  'logLines',
  'reads',
  'readsFailed',
  'alertDeliveries',
] as const
process.stdout.write(`\n${cols.join('\t')}\n${results.map((r) => cols.map((c) => r[c] ?? '-').join('\t')).join('\n')}\n`)
// A scale drill also fails when a read went unanswered or the alert's transition was not delivered exactly once.
const bad = results.some(
  (r) =>
    r.lost ||
    r.duplicated ||
    r.misplaced ||
    r.storedRefused ||
    r.readsFailed ||
    (r.alertDeliveries !== undefined && r.alertDeliveries !== 1),
)
process.exit(failed || bad ? 1 : 0)
