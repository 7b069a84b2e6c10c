// PostgreSQL access through postgres.js. Repository functions take `sql` first
// so that a transaction (sql.begin) can be passed through them.
import net from 'node:net'
import postgres from 'postgres'

export type Sql = postgres.Sql<Record<string, never>>
export type TxSql = postgres.TransactionSql<Record<string, never>>
/** Either the pool or a transaction: what repository functions accept. */
export type Db = Sql | TxSql

export interface DbOptions {
  max?: number
  connectTimeoutSeconds?: number
  applicationName?: string
}

/**
 * postgres.js does not set TCP_NODELAY on its socket, which stalls pipelined
 * writes and COPY by tens of milliseconds (Nagle + delayed ACK). We hand it a
 * socket that is already connected with noDelay set.
 */
function noDelaySocket(timeoutMs: number) {
  return (options: { host: string[]; port: number[] }) =>
    new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: options.host[0], port: options.port[0], noDelay: true })
      const timer = setTimeout(() => socket.destroy(new Error(`connect timeout to ${options.host[0]}:${options.port[0]}`)), timeoutMs)
      socket.once('connect', () => { clearTimeout(timer); socket.removeListener('error', reject); resolve(socket) })
      socket.once('error', (err) => { clearTimeout(timer); reject(err) })
    })
}

/** Opens a connection pool; connections are made lazily on first query. */
export function createSql(url: string, opts: DbOptions = {}): Sql {
  const connectTimeout = opts.connectTimeoutSeconds ?? 5
  return postgres(url, {
    max: opts.max ?? 10,
    connect_timeout: connectTimeout,
    idle_timeout: 60,
    onnotice: () => {},
    connection: { application_name: opts.applicationName ?? 'metrics' },
    // `socket` is supported by postgres.js but missing from its types.
    ...({ socket: noDelaySocket(connectTimeout * 1000) } as object),
  }) as Sql
}

/** Returns the URL of another database on the same server (used to create or clone databases). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** The database name a URL points at. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres'
}
