// How busy the machine was during a stage, and how much of it was not the
// bench: on a shared 2-core machine another process's test run can halve a
// figure, and the report should say so rather than leave it to guesswork.
// Linux /proc only; elsewhere the snapshots are empty and nothing is reported.
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'

const TICKS_PER_SEC = 100 // USER_HZ on every Linux we run on

export interface CpuSnapshot {
  at: number
  busy: number
  total: number
  procs: Map<number, { comm: string; ticks: number }>
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

export function cpuSnapshot(): CpuSnapshot {
  const procs = new Map<number, { comm: string; ticks: number }>()
  let busy = 0
  let total = 0
  const stat = read('/proc/stat')
  if (stat) {
    const f = stat.split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
    total = f.reduce((a, b) => a + b, 0)
    busy = total - (f[3] ?? 0) - (f[4] ?? 0) // minus idle and iowait
  }
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    /* not Linux */
  }
  for (const pid of pids) {
    const p = procStat(Number(pid))
    if (p) procs.set(Number(pid), p)
  }
  return { at: Date.now(), busy, total, procs }
}

/** A process's name and CPU ticks (user + system) so far, from /proc/<pid>/stat; null once it is gone. */
function procStat(pid: number): { comm: string; ticks: number } | null {
  const s = read(`/proc/${pid}/stat`)
  if (!s) return null
  const close = s.lastIndexOf(')')
  const rest = s.slice(close + 2).split(' ')
  // Fields after the comm: state is [0], utime [11], stime [12].
  return { comm: s.slice(s.indexOf('(') + 1, close), ticks: Number(rest[11]) + Number(rest[12]) }
}

/**
 * A process's CPU time so far by thread name (ms), from each thread's /proc/<pid>/task/<tid>/schedstat: the
 * scheduler's own count in nanoseconds, where /proc/<pid>/stat rounds to 10 ms ticks. Threads gone count 0.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  let tids: string[] = []
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tids) {
    const run = read(`/proc/${pid}/task/${tid}/schedstat`)
    const comm = read(`/proc/${pid}/task/${tid}/comm`)?.trim()
    if (!run || !comm) continue
    // Numbered pools (V8's workers, libuv's) are one name.
    const name = tid === String(pid) ? 'main' : comm.replace(/\d+$/, '')
    out.set(name, (out.get(name) ?? 0) + Number(run.split(' ')[0]) / 1e6)
  }
  return out
}

/** CPU time (ms, user + system) the processes have used so far; processes already gone count 0. */
export function processCpuMs(pids: number[]): number {
  return (pids.reduce((sum, pid) => sum + (procStat(pid)?.ticks ?? 0), 0) * 1000) / TICKS_PER_SEC
}

export interface CpuUsage {
  /** Share of the whole machine that was busy (100 = every core). */
  machineBusyPct: number
  /** Share of the whole machine used by processes that are neither the bench's nor PostgreSQL/Redis. */
  othersPct: number
  top: Array<{ pid: number; comm: string; pct: number }>
  /** Share of the machine used by each of the bench's named processes, and by PostgreSQL and Redis (all their processes). */
  ours: Record<string, number>
  /** Busy time no live process accounts for: processes that exited during the stage, interrupts. */
  unattributedPct: number
  elapsedMs: number
}

/** Adds a process that reported its own CPU time (one that exited before the end of the stage). */
export function addSelfReported(u: CpuUsage, name: string, cpuMs: number, cores = os.cpus().length): void {
  const pct = Math.round((cpuMs / (u.elapsedMs * cores)) * 1000) / 10
  u.ours[name] = pct
  u.unattributedPct = Math.max(0, Math.round(u.unattributedPct - pct))
}

/** Usage between two snapshots; `names` names the bench's own pids (itself, its children). Processes that exited before `b` are not seen. */
export function cpuUsage(a: CpuSnapshot, b: CpuSnapshot, names: Map<number, string>): CpuUsage {
  const cores = os.cpus().length
  const elapsedTicks = ((b.at - a.at) / 1000) * TICKS_PER_SEC * cores
  const machineBusyPct = b.total > a.total ? Math.round(((b.busy - a.busy) / (b.total - a.total)) * 100) : 0
  const others: Array<{ pid: number; comm: string; pct: number }> = []
  const ours: Record<string, number> = {}
  const pct = (ticks: number) => (elapsedTicks > 0 ? Math.round((ticks / elapsedTicks) * 1000) / 10 : 0)
  for (const [pid, p] of b.procs) {
    const before = a.procs.get(pid)?.ticks ?? 0 // started during the stage: all its time is in it
    const d = p.ticks - before
    if (d <= 0) continue
    const name = names.get(pid) ?? (/^postgres/.test(p.comm) ? 'postgres' : /^redis-server/.test(p.comm) ? 'redis' : undefined)
    if (name) ours[name] = Math.round(((ours[name] ?? 0) + pct(d)) * 10) / 10
    else others.push({ pid, comm: p.comm, pct: pct(d) })
  }
  others.sort((x, y) => y.pct - x.pct)
  const othersPct = Math.round(others.reduce((s, o) => s + o.pct, 0))
  const oursPct = Object.values(ours).reduce((s, v) => s + v, 0)
  const unattributedPct = Math.max(0, Math.round(machineBusyPct - othersPct - oursPct))
  return { machineBusyPct, othersPct, top: others.slice(0, 3), ours, unattributedPct, elapsedMs: b.at - a.at }
}

/**
 * Waits (at most maxMs) for a second in which other processes (not the
 * bench's, not PostgreSQL/Redis) leave the machine mostly idle, so that a
 * stage does not start in the middle of someone else's test run. Returns how
 * long it waited and how busy the others were in the last second.
 */
export async function waitForQuiet(
  maxMs: number,
  names: Map<number, string>,
  othersBelowPct = 20,
): Promise<{ waitedMs: number; othersPct: number; quiet: boolean }> {
  const started = Date.now()
  for (;;) {
    const a = cpuSnapshot()
    await new Promise((r) => setTimeout(r, 1000))
    const u = cpuUsage(a, cpuSnapshot(), names)
    const othersPct = u.othersPct + u.unattributedPct
    if (othersPct < othersBelowPct) return { waitedMs: Date.now() - started, othersPct, quiet: true }
    if (Date.now() - started >= maxMs) return { waitedMs: Date.now() - started, othersPct, quiet: false }
  }
}

/** Runs `run` and hands `record` the CPU use meanwhile (whatever the outcome) and the result (undefined when it threw). */
export async function cpuDuring<T>(
  names: Map<number, string>,
  run: () => Promise<T>,
  record: (usage: CpuUsage, result: T | undefined) => void,
): Promise<T> {
  const before = cpuSnapshot()
  let result: T | undefined
  try {
    result = await run()
    return result
  } finally {
    record(cpuUsage(before, cpuSnapshot(), names), result)
  }
}
