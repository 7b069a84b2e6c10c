// Scaffolding shared by the benches (run.ts, reads-bench.ts, alerts-bench.ts):
// env knobs, progress lines, the results header, the per-bench session (own
// database and Redis prefix, children, cleanup whatever happens, CPU per
// stage), the report's common lines and the standalone runner.
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { readEnvFile } from '../shared/config.js'
import type { Sql } from '../shared/db.js'
import { cpuDuring } from './machine.js'
import { Children, type Child } from './procs.js'
import { createMigratedDatabase, deleteRedisPrefix, dropDatabase, localTarget, type BenchEnv } from './setup.js'
import { round } from './stats.js'

// Every bench imports this module first thing: settings come from .env as for every other command.
readEnvFile()

export type Say = (line: string) => void

export interface Failed {
  error: string
}

export const isFailed = (x: unknown): x is Failed => typeof x === 'object' && x !== null && 'error' in x

/** An integer env knob: `dflt` when unset or empty, an error when not an integer >= min. */
export function envInt(name: string, dflt: number, min: number): number {
  const raw = process.env[name]
  const v = raw === undefined || raw === '' ? dflt : Number(raw)
  if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer >= ${min}, got ${raw}`)
  return v
}

/** The env's options overridden by the caller's (those not undefined; `log` is not an option). */
export function mergeOptions<C extends object>(fromEnv: C, options: object): C {
  return { ...fromEnv, ...Object.fromEntries(Object.entries(options).filter(([k, v]) => k !== 'log' && v !== undefined)) } as C
}

/** Progress lines on stderr: `[tag HH:MM:SS] line`. */
export function logger(tag: string): Say {
  return (line: string) => process.stderr.write(`[${tag} ${new Date().toISOString().slice(11, 19)}] ${line}\n`)
}

export interface MachineInfo {
  cpus: number
  node: string
  loadavgAtStart: number[]
}

export function machineInfo(): MachineInfo {
  return { cpus: os.cpus().length, node: process.version, loadavgAtStart: os.loadavg().map((x) => round(x, 2)) }
}

/** What every bench's results start with. */
export interface BenchResultsBase<C> {
  startedAt: string
  finishedAt?: string
  machine: MachineInfo
  config: C
  /** Share of the machine used by processes other than this bench, PostgreSQL and Redis, per stage (figures are depressed when high). */
  othersCpuPct: Record<string, number>
  problems: string[]
}

export function resultsHeader<C>(config: C): BenchResultsBase<C> {
  return { startedAt: new Date().toISOString(), machine: machineInfo(), config, othersCpuPct: {}, problems: [] }
}

/**
 * Stops every child, closes the pool, deletes the Redis keys under the prefix
 * and drops the database; each failure is said, not thrown. `redisDone` and
 * `dropped` say what to print once the keys are gone and once the database is.
 */
export async function teardown(o: {
  children: Children
  sql?: Sql
  redis?: { url: string; prefix: string }
  dbName: string
  say: Say
  redisDone?: (deleted: number) => string
  dropped: (deleted: number) => string
}): Promise<void> {
  const { say } = o
  await o.children.stopAll().catch((err) => say(`stopping children: ${(err as Error).message}`))
  await o.sql?.end({ timeout: 2 }).catch(() => {})
  let deleted = 0
  if (o.redis) {
    deleted = await deleteRedisPrefix(o.redis.url, o.redis.prefix).catch((err) => {
      say(`redis cleanup: ${(err as Error).message}`)
      return 0
    })
    if (o.redisDone) say(o.redisDone(deleted))
  }
  await dropDatabase(o.dbName).then(
    () => say(o.dropped(deleted)),
    (err) => say(`dropping ${o.dbName}: ${(err as Error).message}`),
  )
}

/** The cleanups of the benches running now, for the standalone runner's signal handler. */
const activeCleanups = new Set<() => Promise<void>>()

export interface BenchSession extends Omit<BenchEnv, 'sql'> {
  children: Children
  /** Children whose warnings and exits the bench reports. */
  seen: Child[]
  /** Drops and recreates the bench's database, migrates it; the pool is closed by the cleanup. */
  createDatabase(applicationName: string): Promise<Sql>
  /** Runs one stage and records the share of the machine other processes used meanwhile. */
  stage<T>(name: string, run: () => Promise<T>): Promise<T>
  /** Stops the children, deletes the Redis keys, drops the database. Safe to call twice. */
  cleanup(): Promise<void>
  /** The cleanup, then the exit and signal hooks removed: call it in a `finally`. */
  close(): Promise<void>
}

/** A bench's own database (on the local server) and Redis prefix, its children, and their cleanup however the run ends. */
export function openBench(o: { dbName: string; prefixLabel: string; say: Say; othersCpuPct: Record<string, number> }): BenchSession {
  const { databaseUrl, redisUrl, redisPrefix } = localTarget(o.dbName, o.prefixLabel)
  const children = new Children()
  let sql: Sql | undefined
  let cleaning: Promise<void> | undefined
  const cleanup = () =>
    (cleaning ??= teardown({
      children,
      sql,
      redis: { url: redisUrl, prefix: redisPrefix },
      dbName: o.dbName,
      say: o.say,
      dropped: (deleted) => `cleanup: children stopped, ${deleted} Redis keys under ${redisPrefix}: deleted, database ${o.dbName} dropped`,
    }))
  activeCleanups.add(cleanup)
  const onExit = () => children.killAllNow()
  process.on('exit', onExit)
  return {
    databaseUrl,
    redisUrl,
    redisPrefix,
    children,
    seen: [],
    async createDatabase(applicationName) {
      sql = await createMigratedDatabase(databaseUrl, o.dbName, applicationName)
      return sql
    },
    stage: (name, run) => cpuDuring(children.pids, run, (u) => void (o.othersCpuPct[name] = u.othersPct)),
    cleanup,
    async close() {
      await cleanup()
      process.removeListener('exit', onExit)
      activeCleanups.delete(cleanup)
    },
  }
}

/**
 * A bench's start: its config (the env's knobs, overridden by the caller's
 * options), its progress lines, the results header, and its session.
 */
export function beginBench<C extends object, R extends BenchResultsBase<C>>(o: {
  tag: string
  dbName: string
  prefixLabel: string
  fromEnv: C
  options: { log?: Say }
}): { cfg: C; say: Say; results: R; bench: BenchSession } {
  const cfg = mergeOptions(o.fromEnv, o.options)
  const say = o.options.log ?? logger(o.tag)
  // The bench's own fields are all optional: filled in as it runs.
  const results = resultsHeader(cfg) as R
  const bench = openBench({ dbName: o.dbName, prefixLabel: o.prefixLabel, say, othersCpuPct: results.othersCpuPct })
  return { cfg, say, results, bench }
}

// ---------------------------------------------------------------- report

export function machineLine(bench: string, m: MachineInfo): string {
  return `${bench} bench: ${m.cpus} CPUs, node ${m.node}, load average at start ${m.loadavgAtStart.join(' ')}`
}

/** A table: header row, dashes, rows; columns padded to their width, right-aligned where `right` says. */
export function tableLines(rows: string[][], right: (column: number) => boolean = (c) => c === 1): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)))
  const line = (row: string[]) =>
    row
      .map((cell, c) => (right(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd()
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)]
}

/** The stages during which other processes used at least a tenth of the machine, if any. */
export function busyLines(othersCpuPct: Record<string, number>): string[] {
  const busy = Object.entries(othersCpuPct).filter(([, pct]) => pct >= 10)
  return busy.length
    ? [
        `other processes were busy meanwhile (share of all cores): ${busy.map(([stage, pct]) => `${stage} ${pct}%`).join(', ')}: those figures are depressed`,
      ]
    : []
}

/** A blank line, then what looked wrong, or `ok` when nothing did (nothing when `ok` is undefined). */
export function closingLines(problems: string[], ok: string | undefined): string[] {
  if (problems.length) return ['', 'Looked wrong:', ...problems.map((p) => `  - ${p}`)]
  return ok === undefined ? [''] : ['', ok]
}

// ---------------------------------------------------------------- standalone

/** Whether the module at this URL is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return Boolean(process.argv[1]) && moduleUrl === pathToFileURL(process.argv[1]).href
}

/**
 * SIGINT and SIGTERM both to `handler`. `on`, not `once`: Ctrl-C reaches the
 * process twice (from the terminal and relayed by tsx), and a second signal
 * must not kill it half-way through the cleanup.
 */
export function onStopSignals(handler: (sig: 'SIGINT' | 'SIGTERM') => void): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => handler(sig))
}

/**
 * Runs a bench as a script: cleans up on SIGINT/SIGTERM, prints the report on
 * stdout, exits 1 when something looked wrong or the bench failed.
 */
export async function runStandalone<R extends { problems: string[] }>(
  tag: string,
  what: string,
  run: () => Promise<R>,
  render: (r: R) => string,
): Promise<never> {
  onStopSignals((sig) => {
    process.stderr.write(`[${tag}] ${sig}: cleaning up\n`)
    void Promise.all([...activeCleanups].map((cleanup) => cleanup())).finally(() => process.exit(130))
  })
  let code = 0
  try {
    const results = await run()
    process.stdout.write(`${render(results)}\n`)
    if (results.problems.length) code = 1
  } catch (err) {
    process.stderr.write(`${what} failed: ${(err as Error).stack ?? err}\n`)
    code = 1
  }
  process.exit(code)
}
