// Compaction drill: the worker is killed (-9) in the middle of a compaction pass, while
// writers backfill single points (t and ikey, retried with the same ikey) into days that are being
// compacted, and other writers send points at the hot edge (the window is 10 minutes here, the edge
// its start rounded down to an hour: their first are older than the edge and are moved by the passes
// that run every second as they arrive, the later ones stay rows). A history seeded beforehand (old days, and the hours of today up to the
// edge) makes the pass long enough to be cut half-way. Afterwards every accepted point and every
// seeded one is looked up through stat_points (hot rows and blocks alike): nothing lost, nothing
// doubled, and the passes the restarted worker runs finish the compaction up to the edge.
import { hotEdge } from '../../shared/points/compaction.js'
import { type DrillRig, http, type DrillResult } from './drills.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const DAY = 86_400
const SEEDED_STATS = 30

/** The worker compacts every second here (the service's default is 300), with the shortest hot window (10 minutes). */
const HOT_WINDOW_MINUTES = 10
export const COMPACTION_DRILL_SETTINGS = { COMPACTION_INTERVAL_SECONDS: '1', HOT_WINDOW_MINUTES: String(HOT_WINDOW_MINUTES) }

export function compactionDrills(): Record<string, (rig: DrillRig) => Promise<void>> {
  return {
    'compaction-kill': async (rig) => {
      // Killed once the pass has committed some of the seeded days and not all of them.
      const total = await seeded(rig)
      for (let i = 0; i < 600; i++) {
        const [r] = await rig.sql<{ packed: number }[]>`select coalesce(sum(n), 0)::int as packed from point_blocks`
        if (r.packed > 0) {
          await rig.kill(rig.workers[0])
          const [after] = await rig.sql<{ packed: number }[]>`select coalesce(sum(n), 0)::int as packed from point_blocks`
          process.stdout.write(`  killed the worker with ${after.packed} of about ${total} seeded points compacted\n`)
          break
        }
        await sleep(50)
      }
      await sleep(500)
      await rig.spawn('worker')
    },
  }
}

async function seeded(rig: DrillRig): Promise<number> {
  const [r] = await rig.sql<
    { n: number }[]
  >`select count(*)::int as n from points p join stats s on s.id = p.stat_id where s.name like 'seed.%'`
  return r.n
}

/**
 * Seeds SEEDED_STATS gauges with three days of a point every 10 s, two to four days back, and a point every
 * 10 s of today's last three hours up to now (rows as the persist job stores them), then writes steadily while
 * `fault` runs (into the old days, and at the hot edge), and checks every point.
 */
export async function compactionDrill(rig: DrillRig, name: string, fault: () => Promise<void>): Promise<DrillResult> {
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY
  const [{ account }] = await rig.sql<{ account: string }[]>`select id as account from accounts limit 1`
  const statIds = await rig.sql<{ id: string }[]>`
    insert into stats (account_id, name, kind) select ${account}, 'seed.' || i, 'gauge' from generate_series(1, ${SEEDED_STATS}) i
    on conflict (account_id, name) where parent_id is null do update set name = excluded.name returning id`
  // No worker while seeding: its 1 s pass would pick rows up as they arrive, and the kill would find no long pass.
  await rig.kill(rig.workers[0])
  await rig.sql`
    insert into points (stat_id, ts, value)
    select s.id, to_timestamp(${today - 4 * DAY} + k * 10), round((50 + 20 * sin(k / 500.0) + random())::numeric, 2)::float8
    from unnest(${statIds.map((s) => s.id)}::uuid[]) as s(id), generate_series(0, 3 * 8640 - 1) k`
  const nowS = Math.floor(Date.now() / 1000)
  await rig.sql`
    insert into points (stat_id, ts, value)
    select s.id, to_timestamp(k), round((50 + random())::numeric, 2)::float8
    from unnest(${statIds.map((s) => s.id)}::uuid[]) as s(id), generate_series(${Math.max(today, nowS - 3 * 3600)}::bigint, ${nowS}::bigint, 10) k`
  const expected = await rig.sql<{ id: string; n: number; sum: string }[]>`
    select stat_id as id, count(*)::int as n, sum(value::numeric)::text as sum from points where stat_id = any(${statIds.map((s) => s.id)}::uuid[]) group by 1`
  await rig.spawn('worker')

  const stat = `drill.${name}`
  const edgeStat = `drill.${name}.edge`
  const outcome = new Map<number, 'accepted' | 'refused' | 'unknown'>()
  const edgeOutcome = new Map<number, 'accepted' | 'refused' | 'unknown'>()
  const base = today - 3 * DAY
  // Point i of the edge stat at edgeBase + 2 (i mod 600), over the 20 minutes around the hot edge (the window's start
  // rounded down to an hour's stretch): the first half older than the edge when sent, moved by the passes as it
  // arrives, the rest younger, staying rows beside the blocks.
  const edgeBase = hotEdge(new Date(), HOT_WINDOW_MINUTES).getTime() / 1000 - HOT_WINDOW_MINUTES * 60
  let next = 0
  let nextEdge = 0
  let writing = true
  const writer = async (w: number) => {
    while (writing) {
      const i = next++
      outcome.set(i, await writeWithRetries(rig, stat, i, base + i * 37, w))
    }
  }
  const edgeWriter = async (w: number) => {
    while (writing) {
      const i = nextEdge++
      edgeOutcome.set(i, await writeWithRetries(rig, edgeStat, i, edgeBase + (i % 600) * 2, w))
    }
  }
  const writers = [...Array.from({ length: 4 }, (_, w) => writer(w)), ...Array.from({ length: 2 }, (_, w) => edgeWriter(w))]
  const started = Date.now()
  await fault()
  const recoverySeconds = (Date.now() - started) / 1000
  await sleep(1500)
  writing = false
  await Promise.all(writers)
  await rig.settle(rig.settleTimeoutMs)
  // Let the restarted worker's passes finish the compaction (each is quick once the seed is packed).
  const hotBefore = Date.now() + 60_000
  for (;;) {
    // The edge as of a pass a few seconds ago: a pass that has run since left no row before it.
    const edge = hotEdge(new Date(Date.now() - 5_000), HOT_WINDOW_MINUTES)
    const [r] = await rig.sql<{ n: number }[]>`select count(*)::int as n from points where ts < ${edge}`
    if (r.n === 0) break
    if (Date.now() > hotBefore) throw new Error(`compaction left ${r.n} rows older than the hot window`)
    await sleep(500)
  }

  const all = `'-infinity'::timestamptz, 'infinity'::timestamptz`
  const rows = await rig.sql.unsafe<{ value: number; n: number; minT: number; maxT: number }[]>(
    `
    select p.value, count(*)::int as n, min(extract(epoch from p.ts))::bigint::int as "minT", max(extract(epoch from p.ts))::bigint::int as "maxT"
    from stats s cross join lateral stat_points(s.id, ${all}) p where s.name = $1 group by p.value`,
    [stat],
  )
  const stored = new Map(rows.map((r) => [r.value, r.n]))
  const edgeRows = await rig.sql.unsafe<{ value: number; n: number; minT: number; maxT: number }[]>(
    `
    select p.value, count(*)::int as n, min(extract(epoch from p.ts))::bigint::int as "minT", max(extract(epoch from p.ts))::bigint::int as "maxT"
    from stats s cross join lateral stat_points(s.id, ${all}) p where s.name = $1 group by p.value`,
    [edgeStat],
  )
  const edgeStored = new Map(edgeRows.map((r) => [r.value, r.n]))
  const seed = await rig.sql.unsafe<{ id: string; n: number; sum: string }[]>(`
    select s.id, count(*)::int as n, sum(p.value::numeric)::text as sum from stats s cross join lateral stat_points(s.id, ${all}) p
    where s.name like 'seed.%' group by 1`)
  const seedOf = new Map(seed.map((r) => [r.id, r]))
  let seedLost = 0
  let seedDoubled = 0
  for (const e of expected) {
    const got = seedOf.get(e.id)
    const n = got?.n ?? 0
    if (n < e.n) seedLost += e.n - n
    if (n > e.n) seedDoubled += n - e.n
    if (n === e.n && got!.sum !== e.sum) throw new Error(`seeded stat ${e.id}: same count, different values`)
  }
  const of = (out: typeof outcome, o: string) => [...out].filter(([, v]) => v === o).map(([i]) => i)
  const accepted = of(outcome, 'accepted')
  const edgeAccepted = of(edgeOutcome, 'accepted')
  const missing = accepted.filter((i) => !stored.has(i)).length + edgeAccepted.filter((i) => !edgeStored.has(i)).length
  const doubled = (m: Map<number, number>) => [...m.values()].reduce((n, c) => n + c - 1, 0)
  process.stdout.write(`  ${edgeAccepted.length} points accepted at the hot edge, ${accepted.length} into the old days\n`)
  return {
    drill: name,
    path: 'single-ikey',
    sent: outcome.size + edgeOutcome.size + expected.reduce((n, e) => n + e.n, 0),
    accepted: accepted.length + edgeAccepted.length + expected.reduce((n, e) => n + e.n, 0),
    stored: rows.reduce((n, r) => n + r.n, 0) + edgeRows.reduce((n, r) => n + r.n, 0) + seed.reduce((n, r) => n + r.n, 0),
    lost: missing + seedLost,
    lostInWipe: 0,
    wipeWindowMs: null,
    duplicated: doubled(stored) + doubled(edgeStored) + seedDoubled,
    // Value i was written at base + 37 i (edge: edgeBase + 2 (i mod 600)): a stored copy anywhere else is misplaced.
    misplaced:
      rows.filter((r) => r.minT !== base + r.value * 37 || r.maxT !== base + r.value * 37).length +
      edgeRows.filter((r) => r.minT !== edgeBase + (r.value % 600) * 2 || r.maxT !== edgeBase + (r.value % 600) * 2).length,
    storedRefused:
      of(outcome, 'refused').filter((i) => stored.has(i)).length + of(edgeOutcome, 'refused').filter((i) => edgeStored.has(i)).length,
    unknownOutcome: of(outcome, 'unknown').length + of(edgeOutcome, 'unknown').length,
    recoverySeconds,
    logLines: 0,
  }
}

/** One point, retried with the same ikey for up to 30 s on 5xx or no answer; a 4xx is a definite refusal. */
async function writeWithRetries(rig: DrillRig, stat: string, i: number, t: number, w: number): Promise<'accepted' | 'refused' | 'unknown'> {
  const deadline = Date.now() + 30_000
  let last: 'refused' | 'unknown' = 'unknown'
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const webs = rig.webs
    const web = webs[(w + attempt) % webs.length]
    try {
      const res = await http(web.port!, `/api/v1/stats/${encodeURIComponent(stat)}/value`, {
        json: { value: i, t, ikey: `p${i}` },
        bearer: rig.key,
        timeoutMs: 10_000,
      })
      if (res.status === 200) return 'accepted'
      if (res.status < 500 && res.status !== 429) return 'refused'
      last = 'refused'
    } catch {
      last = 'unknown'
    }
    await sleep(200)
  }
  return last
}
