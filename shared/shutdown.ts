// Graceful shutdown for process entry points: on SIGTERM or SIGINT run the
// closers once, and exit anyway if they take longer than the deadline.
import type { Logger } from './log.js'

export function onShutdown(log: Logger, timeoutMs: number, ...closers: Array<() => Promise<void>>): void {
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    const deadline = setTimeout(() => {
      log.error('shutdown deadline passed, exiting with work unfinished', { timeout_ms: timeoutMs })
      process.exit(1)
    }, timeoutMs)
    deadline.unref()
    try {
      for (const close of closers) await close()
      log.info('stopped cleanly')
      process.exit(0)
    } catch (err) {
      log.error('error while shutting down', { error: err })
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
}
