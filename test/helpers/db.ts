// Test databases: one migrated template per run, cloned per test file so files run in parallel.
import { createHash, randomBytes } from 'node:crypto'
import { createSql, withDatabase, type Sql } from '../../shared/db.js'
import { listMigrations, migrate } from '../../shared/migrate.js'

const CLONE_PREFIX = 'metrics_test_'
const TEMPLATE_PREFIX = 'metrics_tpl_'

/** The server the tests use: DATABASE_URL's server, or the local default. */
export function baseUrl(): string {
  return process.env.DATABASE_URL || 'postgres://localhost/metrics'
}

function admin(): Sql {
  return createSql(withDatabase(baseUrl(), 'postgres'), { max: 1, applicationName: 'metrics-test-admin' })
}

function migrationsHash(): string {
  const h = createHash('sha256')
  for (const m of [...listMigrations(false), ...listMigrations(true)]) h.update(m.file).update(m.sql)
  return h.digest('hex').slice(0, 16)
}

/** The template is named after the migrations it holds, so runs of different commits never share one. */
export const TEMPLATE = TEMPLATE_PREFIX + migrationsHash()

/** Builds (or rebuilds, when a migration changed) the template, and drops clones left by crashed runs. */
export async function prepareTemplate(): Promise<void> {
  const sql = admin()
  try {
    const stale = await sql<
      { datname: string }[]
    >`select datname from pg_database where datname like ${`${CLONE_PREFIX}%`} and datname <> ${TEMPLATE}`
    const cutoff = Date.now() - 2 * 3600_000 // a concurrent run's clones are younger than this
    for (const { datname } of stale) {
      const born = Number(datname.slice(CLONE_PREFIX.length).split('_')[0])
      if (born < cutoff) await sql.unsafe(`drop database if exists "${datname}" with (force)`)
    }
    // A template is complete once it carries the 'ready' comment; a half-built one (crashed run) is rebuilt.
    const [current] = await sql<{ comment: string | null }[]>`
      select shobj_description(oid, 'pg_database') as comment from pg_database where datname = ${TEMPLATE}`
    if (current?.comment === 'ready') return
    await sql.unsafe(`drop database if exists "${TEMPLATE}" with (force)`)
    await sql.unsafe(`create database "${TEMPLATE}"`)
    const tpl = createSql(withDatabase(baseUrl(), TEMPLATE), { max: 1 })
    try {
      await migrate(tpl)
    } finally {
      await tpl.end()
    }
    await sql.unsafe(`comment on database "${TEMPLATE}" is 'ready'`)
  } finally {
    await sql.end()
  }
}

/** Clones the template into a fresh database for one test file. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `${CLONE_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`
  const sql = admin()
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await sql.unsafe(`create database "${name}" template "${TEMPLATE}"`)
        break
      } catch (err) {
        // Another file cloning at the same instant can briefly hold the template.
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200))
      }
    }
  } finally {
    await sql.end()
  }
  return {
    url: withDatabase(baseUrl(), name),
    name,
    async drop() {
      const s = admin()
      try {
        await s.unsafe(`drop database if exists "${name}" with (force)`)
      } finally {
        await s.end()
      }
    },
  }
}
