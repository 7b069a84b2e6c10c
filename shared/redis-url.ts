// REDIS_URL names a single node (redis://, rediss://) or a Redis Cluster by its seed nodes
// (redis+cluster://[user:password@]host:port[,host:port...], docs/decisions.md §22). The cluster form is no
// URL the WHATWG parser accepts (several hosts), so it is read here, once, for the config check and the client.

export interface ClusterUrl {
  nodes: Array<{ host: string; port: number }>
  username?: string
  password?: string
  tls: boolean
}

const CLUSTER = /^redis(s?)\+cluster:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?#]+)\/?$/

/** The seed nodes of a `redis+cluster://` (or `rediss+cluster://`) URL; undefined for any other URL. */
export function parseClusterUrl(url: string): ClusterUrl | undefined {
  const m = CLUSTER.exec(url)
  if (!m) return undefined
  const nodes = m[4].split(',').map((hostPort) => {
    const n = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(hostPort.trim())
    if (!n || Number(n[2]) > 65535) throw new Error(`not host:port: ${JSON.stringify(hostPort)}`)
    return { host: n[1].replace(/^\[|\]$/g, ''), port: Number(n[2]) }
  })
  const decode = (v: string | undefined) => (v ? decodeURIComponent(v) : undefined)
  return { nodes, username: decode(m[2]), password: decode(m[3]), tls: m[1] === 's' }
}

export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//.test(url)
}

export function validRedisUrl(url: string): boolean {
  if (isClusterUrl(url)) {
    try {
      return parseClusterUrl(url) !== undefined
    } catch {
      return false
    }
  }
  try {
    return /^rediss?:$/.test(new URL(url).protocol)
  } catch {
    return false
  }
}

/** The address to name in messages: the host of a node URL, the seed list of a cluster's. */
export function redisHosts(url: string): string {
  const cluster = isClusterUrl(url) ? parseClusterUrl(url) : undefined
  return cluster ? `cluster ${cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')}` : new URL(url).host
}
