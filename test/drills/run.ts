// `npm run drills [name ...] [--outage-seconds N]`: runs the fault drills
// (test/drills/drills.ts) against a PostgreSQL and a Redis started here, and
// prints accepted, stored, lost, duplicated and unknown-outcome counts per
// drill. Bounded: each drill settles within a minute or fails, and the whole
// run stops after 15 minutes. Exit code 1 when any accepted point was lost or
// duplicated, or a refused one stored. A Redis restarted empty has lost what it
// held: points accepted and not yet persisted at the wipe are counted apart
// (lostInWipe, with how long before the wipe they were accepted), not as a failure.
import { DrillRig, drills, type DrillResult } from './drills.js'

const args = process.argv.slice(2)
const flag = args.indexOf('--outage-seconds')
const outageSeconds = flag >= 0 ? Number(args.splice(flag, 2)[1]) : 20
const all = drills(outageSeconds)
const names = args.length ? args : Object.keys(all)
for (const n of names) if (!all[n]) { process.stderr.write(`unknown drill ${n}; drills: ${Object.keys(all).join(', ')}\n`); process.exit(64) }

const bound = setTimeout(() => { process.stderr.write('drills: 15-minute bound reached, stopping\n'); process.exit(2) }, 15 * 60_000)
bound.unref()

const results: DrillResult[] = []
const rig = await DrillRig.start()
let failed = false
try {
  for (const name of names) {
    process.stdout.write(`drill ${name} ...\n`)
    try {
      const r = await rig.drill(name, () => all[name](rig))
      results.push(r)
      process.stdout.write(`  ${JSON.stringify(r)}\n`)
    } catch (err) {
      failed = true
      process.stdout.write(`  FAILED: ${(err as Error).message}\n`)
    }
  }
} finally {
  await rig.close()
}
const cols = ['drill', 'sent', 'accepted', 'stored', 'lost', 'lostInWipe', 'wipeWindowMs', 'duplicated', 'storedRefused', 'unknownOutcome', 'recoverySeconds', 'logLines'] as const
process.stdout.write(`\n${cols.join('\t')}\n${results.map((r) => cols.map((c) => r[c]).join('\t')).join('\n')}\n`)
const bad = results.some((r) => r.lost || r.duplicated || r.storedRefused)
process.exit(failed || bad ? 1 : 0)
