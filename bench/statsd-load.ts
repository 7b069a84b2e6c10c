// The StatsD phase of the write bench: counters over UDP at a fixed rate (default 20,000 metrics
// a second, one metric per datagram as hot-shots sends them) for the phase's duration, spread over the load
// accounts; then the share of sent metrics that never reached the points table, the packets the service
// refused (its health's count) and the kernel's UDP receive-buffer drops over the phase.
import dgram from 'node:dgram'
import { readFileSync } from 'node:fs'
import { sleep } from './stats.js'

export interface StatsdPhase {
  ratePerSec: number
  durationMs: number
  sent: number
  sendErrors: number
  stored: number
  /** Share of sent metrics not stored, in percent. */
  droppedPct: number
  /** Packets the service counted as refused during the phase. */
  refused: number
  /** The kernel's UDP RcvbufErrors over the phase (datagrams dropped before the service read them). */
  kernelDrops: number | undefined
  /** Seconds from the last datagram sent to the last point stored. */
  drainSeconds: number
}

/** UDP RcvbufErrors from /proc/net/snmp (Linux), or undefined. */
export function udpReceiveDrops(): number | undefined {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('Udp:'))
    const [head, values] = lines.map((l) => l.split(/\s+/))
    const i = head.indexOf('RcvbufErrors')
    return i > 0 ? Number(values[i]) : undefined
  } catch {
    return undefined
  }
}

/** Sends `${key}.${statPrefix}<k>:1|c` datagrams at `ratePerSec` for `durationMs`, paced every 5 ms. */
export async function sendStatsd(
  port: number,
  keys: string[],
  statPrefix: string,
  stats: number,
  ratePerSec: number,
  durationMs: number,
): Promise<{ sent: number; errors: number; endedAt: number }> {
  const socket = dgram.createSocket('udp4')
  const packets = keys.flatMap((key) => Array.from({ length: stats }, (_, k) => Buffer.from(`${key}.${statPrefix}${k}:1|c`)))
  let sent = 0
  let errors = 0
  let i = 0
  const started = Date.now()
  const tick = 5
  let pending = 0
  for (let due = started; due < started + durationMs; due += tick) {
    const target = Math.round(((due - started + tick) / 1000) * ratePerSec)
    while (sent + errors + pending < target) {
      pending++
      socket.send(packets[i++ % packets.length], port, '127.0.0.1', (err) => {
        pending--
        if (err) errors++
        else sent++
      })
    }
    const wait = due + tick - Date.now()
    if (wait > 0) await sleep(wait)
  }
  while (pending > 0) await sleep(5)
  socket.close()
  return { sent, errors, endedAt: Date.now() }
}
