// A Redis Cluster of the test's own: 3 masters and 3 replicas (redis-server in cluster mode, joined by
// `redis-cli --cluster create`) on free loopback ports, to run the service against and to fail a master under it.
// The machine's shared Redis is never touched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { closedPort } from './http.js'

export interface ClusterNode {
  port: number
  /** The node's process id while it runs (for CPU readings). */
  pid(): number | undefined
  /** SIGKILL: the node is gone, its replica (if it was a master) is promoted after cluster-node-timeout. */
  kill(): Promise<void>
  /** Starts the node again on its port and data folder: it rejoins (a killed master comes back as a replica). */
  start(): Promise<void>
}

export interface OwnRedisCluster {
  /** `redis+cluster://` URL naming every node as a seed. */
  url: string
  nodes: ClusterNode[]
  /** The nodes that are masters right now. */
  masters(): Promise<ClusterNode[]>
  /** The node serving a key's slot as master right now. */
  masterOf(key: string): Promise<ClusterNode>
  /** Waits until every live node reports cluster_state:ok and every slot has a live master. */
  healthy(timeoutMs?: number): Promise<void>
  destroy(): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

class NodeExited extends Error {}

/** `nodeTimeoutMs`: how long a master may be silent before its replica takes over (Redis' default is 15 s). */
export async function startRedisCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<OwnRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'metrics-redis-cluster-'))
  const ports: Array<{ port: number; bus: number }> = []
  for (let i = 0; i < 6; i++) ports.push({ port: await closedPort(), bus: await closedPort() })
  const children = new Map<number, ChildProcess>()

  const ask = async (port: number, ...command: string[]): Promise<string | undefined> => {
    const r = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      connectTimeout: 500,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    })
    r.on('error', () => {})
    try {
      await r.connect()
      return String(await r.call(command[0], ...command.slice(1)))
    } catch {
      return undefined
    } finally {
      r.disconnect()
    }
  }

  const startNode = async ({ port, bus }: { port: number; bus: number }) => {
    const nodeDir = join(dir, String(port))
    spawnSync('mkdir', ['-p', nodeDir])
    const args = [
      '--port',
      String(port),
      '--cluster-port',
      String(bus),
      '--bind',
      '127.0.0.1',
      '--dir',
      nodeDir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(opts.nodeTimeoutMs ?? 2000),
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--loglevel',
      'warning',
    ]
    const child = spawn('redis-server', args, { stdio: 'ignore' })
    children.set(port, child)
    const deadline = Date.now() + 10_000
    while ((await ask(port, 'PING')) !== 'PONG') {
      if (child.exitCode !== null) {
        children.delete(port)
        throw new NodeExited(`redis-server (cluster node) on port ${port} exited with ${child.exitCode}`)
      }
      if (Date.now() > deadline) throw new Error(`redis-server (cluster node) on port ${port} did not answer within 10 s`)
      await sleep(50)
    }
  }
  const killNode = async (port: number) => {
    const c = children.get(port)
    children.delete(port)
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    await new Promise((resolve) => {
      c.once('exit', resolve)
      c.kill('SIGKILL')
    })
  }
  const onExit = () => {
    for (const c of children.values()) c.kill('SIGKILL')
  }
  process.on('exit', onExit)

  const healthy = async (timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const live = ports.filter((p) => children.has(p.port))
      const infos = await Promise.all(live.map((p) => ask(p.port, 'CLUSTER', 'INFO')))
      if (infos.every((i) => i?.includes('cluster_state:ok') && i.includes('cluster_slots_ok:16384'))) return
      if (Date.now() > deadline)
        throw new Error(
          `Redis Cluster not healthy within ${timeoutMs} ms: ${infos.map((i) => /cluster_state:\w+/.exec(i ?? '')?.[0] ?? 'no answer').join(', ')}`,
        )
      await sleep(100)
    }
  }

  // A node that exits at once lost its port to another process between closedPort's check and its own bind (other
  // test files pick ports at the same time): it starts again on new ones.
  const startFirst = async (i: number) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startNode(ports[i])
      } catch (err) {
        if (!(err instanceof NodeExited) || attempt === 3) throw err
        ports[i] = { port: await closedPort(), bus: await closedPort() }
      }
    }
  }

  try {
    await Promise.all(ports.map((_, i) => startFirst(i)))
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p.port}`), '--cluster-replicas', '1', '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    )
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr || create.stdout}`)
    await healthy()
  } catch (err) {
    onExit()
    process.removeListener('exit', onExit)
    rmSync(dir, { recursive: true, force: true })
    throw err
  }

  const nodes: ClusterNode[] = ports.map((p) => ({
    port: p.port,
    pid: () => children.get(p.port)?.pid,
    kill: () => killNode(p.port),
    start: () => startNode(p),
  }))
  return {
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p.port}`).join(',')}`,
    nodes,
    async masters() {
      const live = nodes.find((n) => children.has(n.port))
      const lines = (await ask(live!.port, 'CLUSTER', 'NODES'))?.split('\n') ?? []
      const ports = lines
        .map((l) => l.split(' '))
        .filter((f) => f[2]?.split(',').includes('master') && !f[2].includes('fail'))
        .map((f) => Number(f[1].split(':')[1].split('@')[0]))
      return nodes.filter((n) => ports.includes(n.port))
    },
    async masterOf(key: string) {
      for (const n of nodes) {
        if (!children.has(n.port)) continue
        const slot = Number(await ask(n.port, 'CLUSTER', 'KEYSLOT', key))
        const shards = await ask(n.port, 'CLUSTER', 'NODES')
        for (const line of (shards ?? '').split('\n')) {
          const [, addr, flags, , , , , , ...ranges] = line.split(' ')
          if (!flags?.includes('master') || flags.includes('fail')) continue
          const owns = ranges.some((r) => {
            const [a, b = a] = r.split('-').map(Number)
            return slot >= a && slot <= b
          })
          if (owns) return nodes.find((x) => x.port === Number(addr.split(':')[1].split('@')[0]))!
        }
      }
      throw new Error(`no live master serves ${key}`)
    },
    healthy,
    async destroy() {
      onExit()
      await Promise.all([...children.keys()].map(killNode))
      process.removeListener('exit', onExit)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
