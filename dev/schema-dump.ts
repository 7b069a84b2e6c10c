// The current-schema snapshot, sql/schema.sql: the tables, functions and indexes as the numbered migrations
// leave them on plain PostgreSQL, in one file (a migration may redefine what an earlier one made, so no single
// migration shows the schema as it is). `npx tsx dev/schema-dump.ts` migrates a fresh database on the server
// DATABASE_URL names (or the local default), dumps it with the server's own pg_dump and writes the snapshot;
// test/shared/schema-snapshot.test.ts fails when the migrations and the snapshot disagree.
//
// What makes the dump stable from run to run and machine to machine: the pg_dump of the server's major version
// (another major's pg_dump writes the same schema differently), and the lines that vary removed (the versions
// in the header, the random key of `\restrict`, the session SETs pg_dump emits for a restore).
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { loadConfig, readEnvFile } from '../shared/config.js'
import { createSql, withDatabase, type Sql } from '../shared/db.js'
import { migrate, timescaleAvailable } from '../shared/migrate.js'

const run = promisify(execFile)

/** The snapshot's path. */
export const SNAPSHOT = join(dirname(dirname(fileURLToPath(import.meta.url))), 'sql', 'schema.sql')

/** The command that rewrites the snapshot, as failures name it. */
export const REGENERATE = 'npx tsx dev/schema-dump.ts'

/** The server's major version (15 for 15.20). */
export async function serverMajor(sql: Sql): Promise<number> {
  const [row] = await sql<{ v: string }[]>`select current_setting('server_version_num') as v`
  return Math.floor(Number(row.v) / 10000)
}

/**
 * A pg_dump of the given major version: $PG_DUMP, then where the usual packages install one per version
 * (Debian, RHEL, Homebrew), then PATH. Each candidate is asked its version; the first of the right major wins.
 */
export async function findPgDump(major: number): Promise<string> {
  const candidates = [
    process.env.PG_DUMP,
    `/usr/lib/postgresql/${major}/bin/pg_dump`,
    `/usr/pgsql-${major}/bin/pg_dump`,
    `/opt/homebrew/opt/postgresql@${major}/bin/pg_dump`,
    `/usr/local/opt/postgresql@${major}/bin/pg_dump`,
    'pg_dump',
  ].filter((c): c is string => !!c && (c === 'pg_dump' || existsSync(c)))
  const seen: string[] = []
  for (const bin of candidates) {
    const version = await run(bin, ['--version']).then(
      (r) => r.stdout.trim(),
      () => undefined,
    )
    if (!version) continue
    seen.push(`${bin}: ${version}`)
    if (Number(/\b(\d+)\.\d+/.exec(version)?.[1]) === major) return bin
  }
  throw new Error(
    `no pg_dump of PostgreSQL ${major} (the server's version) found` +
      (seen.length ? `; found only ${seen.join(', ')}` : '') +
      `. Install the client of that version (Debian: postgresql-client-${major}) or set PG_DUMP to its path.`,
  )
}

/** The lines of a pg_dump that vary between runs, servers or minor versions, and the session settings. */
const VARYING = [
  /^\\(un)?restrict /, // a random key per dump (PostgreSQL 13.22, 14.19, 15.14, 16.10, 17.6 and later)
  /^-- Dumped (from database|by pg_dump) version /,
  /^SET /,
  /^SELECT pg_catalog\.set_config\('search_path'/,
]

/** A pg_dump's text without its varying lines, under a header saying where it comes from. */
export function normalise(dump: string, major: number): string {
  // Each varying line goes with the blank line after it, so that nothing else (function bodies) is touched.
  const lines = dump.split('\n')
  const kept: string[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!VARYING.some((re) => re.test(lines[i]))) kept.push(lines[i])
    else if (lines[i + 1] === '') i++
  }
  const body = kept.join('\n').trim()
  return [
    '-- The schema as the migrations in sql/ leave it on plain PostgreSQL (no TimescaleDB), for reading:',
    '-- the migrations remain the only thing that changes a database. Generated, do not edit: after adding',
    `-- or changing a migration, regenerate it with \`${REGENERATE}\` (pg_dump ${major}, --schema-only).`,
    '',
    body,
    '',
  ].join('\n')
}

/** Dumps the schema of the database a URL names, normalised. */
export async function dumpSchema(url: string): Promise<string> {
  const sql = createSql(url, { max: 1, applicationName: 'metrics-schema-dump' })
  let major: number
  try {
    if (await timescaleAvailable(sql)) {
      throw new Error(
        'this server offers TimescaleDB, so the migrations take its path; sql/schema.sql is the plain ' +
          'PostgreSQL schema: dump it on a server without the extension',
      )
    }
    major = await serverMajor(sql)
  } finally {
    await sql.end()
  }
  const bin = await findPgDump(major)
  // The password travels in the environment, not on pg_dump's command line where `ps` would show it.
  const u = new URL(url)
  const password = decodeURIComponent(u.password)
  u.password = ''
  const { stdout } = await run(bin, ['--schema-only', '--no-owner', '--no-privileges', '--dbname', u.toString()], {
    env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) },
    maxBuffer: 64 * 1024 * 1024,
  })
  return normalise(stdout, major)
}

/** Migrates a fresh database on the server of `serverUrl`, dumps it, drops it. */
export async function dumpFreshSchema(serverUrl: string): Promise<string> {
  const name = `metrics_schema_${Date.now()}_${randomBytes(4).toString('hex')}`
  const admin = createSql(withDatabase(serverUrl, 'postgres'), { max: 1, applicationName: 'metrics-schema-dump' })
  try {
    await admin.unsafe(`create database "${name}"`)
    try {
      const url = withDatabase(serverUrl, name)
      const sql = createSql(url, { max: 1, applicationName: 'metrics-schema-dump' })
      try {
        await migrate(sql)
      } finally {
        await sql.end()
      }
      return await dumpSchema(url)
    } finally {
      await admin.unsafe(`drop database if exists "${name}" with (force)`)
    }
  } finally {
    await admin.end()
  }
}

/** Writes sql/schema.sql. A function rather than top-level await: the tests load this module with require(). */
async function main(): Promise<void> {
  readEnvFile()
  const serverUrl = loadConfig({ DATABASE_URL: process.env.DATABASE_URL }).databaseUrl
  try {
    const text = await dumpFreshSchema(serverUrl)
    writeFileSync(SNAPSHOT, text)
    process.stdout.write(
      `wrote sql/schema.sql (${text.split('\n').length} lines) from a fresh database migrated on ${new URL(serverUrl).host || 'the local socket'}\n`,
    )
  } catch (err) {
    process.stderr.write(`schema dump failed: ${(err as Error).message}\n`)
    process.exitCode = 1
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main()
