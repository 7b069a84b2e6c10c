// PostgreSQL access through postgres.js. Repository functions take `sql` first
// so that a transaction (sql.begin) can be passed through them.
import net from 'node:net'
import postgres from 'postgres'
import { countPgRoundTrips } from './io-counts.js'

export type Sql = postgres.Sql<Record<string, never>>
export type TxSql = postgres.TransactionSql<Record<string, never>>
/** Either the pool or a transaction: what repository functions accept. */
export type Db = Sql | TxSql

export interface DbOptions {
  max?: number
  connectTimeoutSeconds?: number
  /** Server-side limit on one statement; 0 for none (migrations). Default 30 s. */
  statementTimeoutSeconds?: number
  applicationName?: string
  /** Count the round trips on this pool's connections (shared/io-counts.ts; IO_COUNTS=1, benchmarks only). */
  countRoundTrips?: boolean
}

/**
 * postgres.js does not set TCP_NODELAY on its socket, which stalls pipelined
 * writes and COPY by tens of milliseconds (Nagle + delayed ACK). We hand it a
 * socket with noDelay set that is still connecting: postgres.js writes its
 * startup message into it (sent once connected) and, as with its own sockets,
 * sees a failed connect as the socket's 'error' and 'close', then retries the
 * connection. (A socket function that rejects instead leaves that pool slot
 * connecting forever: once every slot has failed so, every query waits
 * forever.) postgres.js' connect_timeout bounds the connect.
 */
function noDelaySocket(options: { host: string[]; port: number[]; path?: string }): net.Socket {
  return options.path ? net.connect({ path: options.path }) : net.connect({ host: options.host[0], port: options.port[0], noDelay: true })
}

/** Opens a connection pool; connections are made lazily on first query, and remade after any failure. */
export function createSql(url: string, opts: DbOptions = {}): Sql {
  const statementTimeoutMs = (opts.statementTimeoutSeconds ?? 30) * 1000
  return postgres(url, {
    max: opts.max ?? 10,
    connect_timeout: opts.connectTimeoutSeconds ?? 5,
    idle_timeout: 60,
    // A server that vanished without closing the connection (a failover, a cut network) is noticed by TCP keepalive.
    keep_alive: 10,
    // postgres.js waits up to 20 s between reconnects (3^n / 100 s, n counting failures pool-wide): a server
    // back after a ten-second outage would sit unused for as long again. At most a second here.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2),
    onnotice: () => {},
    // A statement stuck behind a lock or a hung plan ends with an error rather than holding a connection forever.
    connection: {
      application_name: opts.applicationName ?? 'metrics',
      ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
    },
    // `socket` is supported by postgres.js but missing from its types.
    ...({
      socket: opts.countRoundTrips ? (o: Parameters<typeof noDelaySocket>[0]) => countPgRoundTrips(noDelaySocket(o)) : noDelaySocket,
    } as object),
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
