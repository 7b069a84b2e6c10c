// `npm run migrate` and the Procfile's release phase: apply pending migrations.
import { loadConfigOrExit } from './config.js'
import { createSql } from './db.js'
import { migrate } from './migrate.js'

const config = loadConfigOrExit()
const sql = createSql(config.databaseUrl, { max: 1, applicationName: 'metrics-migrate', statementTimeoutSeconds: 0 })
try {
  const applied = await migrate(sql, (line) => process.stdout.write(`${line}\n`))
  process.stdout.write(applied.length ? `migrated: ${applied.length} applied\n` : 'migrated: up to date\n')
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`)
  process.exitCode = 1
} finally {
  await sql.end({ timeout: 2 })
}
