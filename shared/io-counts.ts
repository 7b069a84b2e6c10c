// How many times this process went to PostgreSQL and Redis: the write bench
// divides them by the requests it sent, to show what each request costs in
// round trips (none per write beyond the shared, group-committed job
// add). Counting is a few increments; the figures are printed as one JSON line
// on SIGUSR2, so that a running process can be asked without a route for it.
// Off unless IO_COUNTS=1 (shared/config.ts): only the web process wires it in
// (api/server.ts), and only bench/run.ts turns it on.
import type { Socket } from 'node:net'
import type { Redis } from 'ioredis'

export const ioCounts = {
  /** Statements sent to PostgreSQL that wait for their answer: Sync and simple Query messages. */
  pgRoundTrips: 0,
  /** Commands sent to Redis (auto-pipelined commands of one tick share one write). */
  redisCommands: 0,
}

/**
 * Counts the round trips written on a postgres.js socket. postgres.js writes whole frontend messages
 * (type byte, then a length that counts itself); the first write is the startup message, which has no
 * type byte. A round trip ends with Sync ('S') in the extended protocol, or is one simple Query ('Q').
 */
export function countPgRoundTrips(socket: Socket): Socket {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean
  let started = false
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!started) started = true
    else if (Buffer.isBuffer(chunk)) {
      for (let at = 0; at + 5 <= chunk.length; at += 1 + chunk.readInt32BE(at + 1)) {
        const type = chunk[at]
        if (type === 0x53 || type === 0x51) ioCounts.pgRoundTrips++
      }
    }
    return write(chunk, ...rest)
  }) as typeof socket.write
  return socket
}

/** Counts every command sent on a Redis connection. */
export function countRedisCommands(redis: Redis): Redis {
  const send = redis.sendCommand.bind(redis)
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    ioCounts.redisCommands++
    return send(...args)
  }) as Redis['sendCommand']
  return redis
}

/**
 * Prints the counts (one JSON line on stdout) whenever the process gets SIGUSR2, with the process's own
 * counters beside them (the web process: the single writes its direct route answered).
 */
export function reportIoCountsOnSignal(more: () => Record<string, number> = () => ({})): void {
  process.on('SIGUSR2', () => process.stdout.write(`${JSON.stringify({ io_counts: { ...ioCounts, ...more(), at: Date.now() } })}\n`))
}
