// The StatsD edge (decisions.md 21): UDP datagrams and newline-delimited TCP on STATSD_PORT, handed to the
// StatsdIntake in shared/. Beside api/server.ts, started by it when STATSD_PORT is set. Both sockets listen
// on every address, IPv6 and IPv4 (clients that resolve `localhost` to ::1 reach it too), or IPv4 alone
// where the host has no IPv6.
import dgram from 'node:dgram'
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

async function bindUdp(port: number, onMessage: (msg: Buffer) => void): Promise<dgram.Socket> {
  const attempt = (type: 'udp6' | 'udp4') => new Promise<dgram.Socket>((resolve, reject) => {
    const socket = dgram.createSocket({ type, ipv6Only: false, recvBufferSize: UDP_RECEIVE_BUFFER })
    socket.once('error', reject)
    socket.bind(port, type === 'udp6' ? '::' : '0.0.0.0', () => {
      socket.off('error', reject)
      resolve(socket)
    })
  })
  const socket = await attempt('udp6').catch(() => attempt('udp4'))
  socket.on('message', onMessage)
  return socket
}

async function listenTcp(server: net.Server, port: number): Promise<void> {
  const attempt = (host: string) => new Promise<void>((resolve, reject) => {
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
  const intake = new StatsdIntake({ ingest: deps.ingest, keys: deps.keys, limits: deps.limits, redis: deps.redis, config: deps.config, log })
  const udp = await bindUdp(port, (msg) => void intake.packet(msg.toString('utf8')))
  udp.on('error', (err) => log.warn('statsd udp socket error', { error: err }))
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
  const udpPort = udp.address().port
  const tcpPort = (tcp.address() as AddressInfo).port
  log.info(`statsd listening on udp ${udpPort} and tcp ${tcpPort} (lines: <API key>.<metric>:<value>|c|g|ms|h|d)`)
  return {
    udpPort, tcpPort, intake,
    async close() {
      udp.close()
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()))
      for (const s of sockets) s.end()
      setTimeout(() => sockets.forEach((s) => s.destroy()), 1_000).unref()
      await closed
      await intake.close()
    },
  }
}
