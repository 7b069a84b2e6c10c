// A transaction whose backend dies mid-statement (what a PostgreSQL restart does to the ones in flight) makes
// postgres.js write its ROLLBACK on the closed connection and throw from a setImmediate, which no caller catches
// (shared/driver-guard.ts). Each case runs test/fixtures/closed-socket-write.ts as a process of its own, on a
// database of its own: unguarded the process dies of it (the defect is real, and this test can fail); with the
// guard the service's entry points install, it lives on, the transaction rejected, and its pool answers again.
import test from 'ava'
import { execFile } from 'node:child_process'
import { createTestDatabase } from '../helpers/db.js'

function runFixture(url: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/closed-socket-write.ts', url, ...args],
      { timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    )
  })
}

let db: Awaited<ReturnType<typeof createTestDatabase>>
test.before(async () => {
  db = await createTestDatabase()
})
test.after.always(() => db?.drop())

test.serial('unguarded, the driver write on the closed connection ends the process', async (t) => {
  const r = await runFixture(db.url, '--unguarded')
  t.is(r.code, 1)
  // Whether the transaction's rejection is printed before the throw from setImmediate ends the process is a race
  // (lost under load once in a full run): the throw, and no answer from the pool after it, are what show the defect.
  t.regex(r.stderr, /TypeError: Cannot read properties of null \(reading 'write'\)\n\s+at Immediate\.nextWrite/)
  t.notRegex(r.stdout, /pool answers/)
})

test.serial('guarded, the process lives on: the transaction rejected, one warning, the pool answering', async (t) => {
  const r = await runFixture(db.url)
  t.is(r.code, 0, r.stderr)
  t.regex(r.stdout, /transaction: rejected CONNECTION_CLOSED/)
  t.is(r.stdout.match(/warn: PostgreSQL connection closed under a statement being written/g)?.length, 1)
  t.regex(r.stdout, /pool answers/)
  t.is(r.stderr, '')
})
