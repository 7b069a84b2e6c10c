// A defect of postgres.js (3.4.9, the newest release; upstream porsager/postgres#1208 and #1154): a statement
// written on a connection whose socket has just closed is flushed from a setImmediate after the driver set the
// socket to null, and the TypeError thrown there reaches no caller, so the process exits. sql.begin writes such a
// statement itself, its ROLLBACK, whenever the backend of a transaction dies mid-statement: every PostgreSQL
// restart under load could end a worker (persist jobs then waited for a process nobody restarted) or a web
// process. The statement that was to be written was already rejected (CONNECTION_CLOSED) and the transaction's
// caller told, so nothing is lost by skipping the write: the connection is remade as after any failure.

/** Whether an uncaught error is that defect: postgres.js' deferred write on a connection already closed. */
export function isClosedSocketWrite(err: unknown): boolean {
  return (
    err instanceof TypeError && err.message === "Cannot read properties of null (reading 'write')" && /\bnextWrite\b/.test(err.stack ?? '')
  )
}

let installed = false

/**
 * Keeps the process running through that defect (logged as a warning); any other uncaught exception still ends it
 * as Node would (its stack on stderr, exit code 1). For the service's entry points only: a test runner has handlers
 * of its own.
 */
export function surviveClosedSocketWrites(log: { warn(message: string, meta?: object): unknown }): void {
  if (installed) return
  installed = true
  process.on('uncaughtException', (err, origin) => {
    if (isClosedSocketWrite(err)) {
      log.warn(
        'PostgreSQL connection closed under a statement being written (postgres.js defect); the statement was already failed and is retried',
        {
          error: err.message,
        },
      )
      return
    }
    process.stderr.write(
      `${origin === 'unhandledRejection' ? 'Unhandled rejection' : 'Uncaught exception'}: ${(err as Error)?.stack ?? String(err)}\n`,
    )
    process.exit(1)
  })
}
