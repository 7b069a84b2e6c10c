// The StatsD edge (docs/decisions.md §21): UDP datagrams (read by a worker thread) and newline-delimited TCP on
// STATSD_PORT, handed to the StatsdIntake in shared/. Beside api/server.ts, started by it when STATSD_PORT is set. Both sockets listen
// on every address, IPv6 and IPv4 (clients that resolve `localhost` to ::1 reach it too), or IPv4 alone
// where the host has no IPv6.
import { Worker } from 'node:worker_threads'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../shared/log.js'
import { StatsdIntake } from '../shared/ingest/protocols/statsd-intake.js'
import type { AppDeps } from './context.js'

/** A TCP line longer than this closes the connection: no StatsD line is that long. */
const MAX_TCP_LINE = 64 * 1024
/** Kernel receive buffer asked for the UDP socket, so bursts wait there rather than being dropped (Linux caps it at net.core.rmem_max). */
const UDP_RECEIVE_BUFFER = 8 * 1024 * 1024

export interface RunningStatsd {
  udpPort: number
  tcpPort: number
  intake: StatsdIntake
  close(): Promise<void>
}

// The UDP socket lives in a worker thread of its own: it does nothing but read datagrams and hand them to
// the main thread in batches, so the kernel's receive buffer is drained even while the main thread is busy
// (a 5,000-point flush, an HTTP batch, a garbage collection). Read on the main thread, every stall longer
// than the buffer's few hundred milliseconds dropped datagrams: a third of them at 20,000 a second here.
// Plain JavaScript evaluated as CommonJS, so it runs the same under tsx and from dist/.
const UDP_WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const dgram = require('node:dgram')
const { port, recvBufferSize, batchMs, batchMax } = workerData
let batch = []
let timer
const send = () => { clearTimeout(timer); timer = undefined; if (batch.length) parentPort.postMessage(batch); batch = [] }
const bind = (type) => new Promise((resolve, reject) => {
  const socket = dgram.createSocket({ type, ipv6Only: false, recvBufferSize })
  socket.once('error', reject)
  socket.bind(port, type === 'udp6' ? '::' : '0.0.0.0', () => { socket.off('error', reject); resolve(socket) })
})
bind('udp6').catch(() => bind('udp4')).then((socket) => {
  socket.on('message', (msg) => {
    batch.push(msg.toString('utf8'))
    if (batch.length >= batchMax) send()
    else if (!timer) timer = setTimeout(send, batchMs)
  })
  socket.on('error', (err) => parentPort.postMessage({ error: String(err && err.message || err) }))
  parentPort.on('message', (m) => { if (m === 'close') { send(); socket.close(() => process.exit(0)) } })
  parentPort.postMessage({ bound: socket.address().port })
}, (err) => parentPort.postMessage({ failed: String(err && err.message || err) }))
`

interface UdpReceiver {
  port: number
  close(): Promise<void>
}

async function receiveUdp(port: number, log: Logger, onPackets: (packets: string[]) => void): Promise<UdpReceiver> {
  const worker = new Worker(UDP_WORKER, {
    eval: true,
    workerData: { port, recvBufferSize: UDP_RECEIVE_BUFFER, batchMs: 2, batchMax: 1000 },
  })
  const bound = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject)
    worker.on('message', (m: string[] | { bound?: number; failed?: string; error?: string }) => {
      if (Array.isArray(m)) return onPackets(m)
      if (m.bound !== undefined) resolve(m.bound)
      else if (m.failed) reject(new Error(`statsd: cannot listen on udp port ${port}: ${m.failed}`))
      else if (m.error) log.warn('statsd udp socket error', { error: m.error })
    })
  })
  return {
    port: bound,
    async close() {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
      worker.postMessage('close')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 1_000).unref())])
      await worker.terminate()
    },
  }
}

async function listenTcp(server: net.Server, port: number): Promise<void> {
  const attempt = (host: string) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  await attempt('::').catch(() => attempt('0.0.0.0'))
}

/** Listens for StatsD on `port` (0: free ports, UDP and TCP each its own). */
export async function startStatsd(deps: AppDeps, port: number, log: Logger): Promise<RunningStatsd> {
  const intake = new StatsdIntake({
    ingest: deps.ingest,
    keys: deps.keys,
    limits: deps.limits,
    redis: deps.redis,
    config: deps.config,
    log,
  })
  const udp = await receiveUdp(port, log, (packets) => {
    for (const p of packets) void intake.packet(p)
  })
  const sockets = new Set<net.Socket>()
  const tcp = net.createServer((socket) => {
    sockets.add(socket)
    let rest = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      rest += chunk
      const end = rest.lastIndexOf('\n')
      if (end === -1) {
        if (rest.length > MAX_TCP_LINE) socket.destroy()
        return
      }
      // Each line is a packet of its own: a bad line refuses itself, not its neighbours.
      for (const line of rest.slice(0, end).split('\n')) if (line) void intake.packet(line)
      rest = rest.slice(end + 1)
    })
    socket.on('end', () => {
      if (rest) void intake.packet(rest)
      rest = ''
    })
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await listenTcp(tcp, port)
  const udpPort = udp.port
  const tcpPort = (tcp.address() as AddressInfo).port
  log.info(`statsd listening on udp ${udpPort} and tcp ${tcpPort} (lines: <API key>.<metric>:<value>|c|g|ms|h|d)`)
  return {
    udpPort,
    tcpPort,
    intake,
    async close() {
      await udp.close()
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()))
      for (const s of sockets) s.end()
      setTimeout(
        () =>
          sockets.forEach((s) => {
            s.destroy()
          }),
        1_000,
      ).unref()
      await closed
      await intake.close()
    },
  }
}
