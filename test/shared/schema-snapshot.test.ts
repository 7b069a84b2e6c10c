// sql/schema.sql is the schema the migrations make (dev/schema-dump.ts): a database migrated for this run (the
// test template, cloned) is dumped the same way and must match it line for line.
import test from 'ava'
import { readFileSync } from 'node:fs'
import { dumpSchema, REGENERATE, SNAPSHOT } from '../../dev/schema-dump.js'
import { createTestDatabase } from '../helpers/db.js'

/** The first line where two texts part, with a line of context, for a message a reader can act on. */
function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n')
  const e = expected.split('\n')
  const i = a.findIndex((line, n) => line !== e[n])
  const at = i < 0 ? a.length : i
  return `first difference at line ${at + 1}:\n  migrations: ${JSON.stringify(a[at] ?? '(end of dump)')}\n  snapshot:   ${JSON.stringify(e[at] ?? '(end of file)')}`
}

test('sql/schema.sql is what the migrations make (plain PostgreSQL), and dumping it twice gives the same text', async (t) => {
  const db = await createTestDatabase()
  t.teardown(() => db.drop())
  const dumped = await dumpSchema(db.url)
  t.is(await dumpSchema(db.url), dumped, 'the normalised dump varies from run to run: dev/schema-dump.ts must remove the varying lines')
  const snapshot = readFileSync(SNAPSHOT, 'utf8')
  if (dumped !== snapshot) {
    t.fail(
      `sql/schema.sql disagrees with the migrations in sql/. If the migrations are right, regenerate the snapshot with ` +
        `\`${REGENERATE}\` and commit it with them; ${firstDifference(dumped, snapshot)}`,
    )
  }
  // What the snapshot is for: objects a later migration redefined appear once, as they are now.
  t.is(snapshot.match(/^CREATE FUNCTION public\.stat_newest\(/gm)?.length, 1)
  t.regex(snapshot, /^CREATE TABLE public\.points \(/m)
})
