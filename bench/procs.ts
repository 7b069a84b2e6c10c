// Child processes of the bench: started with node directly (not through npx)
// so that the pid we hold is the process we mean to stop, their output kept
// in a log file and a short ring buffer, and every one of them stopped on the
// way out whatever happened.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import net from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sleep } from './stats.js'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const LOG_DIR = join(ROOT, 'bench', 'logs')
/** Every request of the benches goes here. */
export const HOST = '127.0.0.1'

export class Child {
  readonly lines: string[] = []
  /** Output lines that look like a warning or an error (LOG_LEVEL=warn keeps only those anyway). */
  warnings = 0
  exited: { code: number | null; signal: NodeJS.Signals | null } | null = null
  readonly exit: Promise<void>
  private readonly log: WriteStream

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    mkdirSync(LOG_DIR, { recursive: true })
    this.log = createWriteStream(join(LOG_DIR, `${name}.log`))
    const line = (text: string) => {
      if (!text.trim()) return
      this.lines.push(text)
      if (this.lines.length > 200) this.lines.shift()
      if (/"level":"(warn|error)"|error|warn/i.test(text)) this.warnings++
    }
    // Lines are reassembled per stream: a chunk may end in the middle of one.
    const reader = () => {
      let partial = ''
      return {
        data: (chunk: Buffer) => {
          this.log.write(chunk)
          const parts = (partial + chunk.toString('utf8')).split('\n')
          partial = parts.pop() ?? ''
          for (const p of parts) line(p)
        },
        end: () => line(partial),
      }
    }
    const out = reader()
    const err = reader()
    proc.stdout?.on('data', out.data)
    proc.stderr?.on('data', err.data)
    // 'close' (not 'exit') fires once the output streams are drained too.
    this.exit = new Promise((resolve) =>
      proc.once('close', (code, signal) => {
        out.end()
        err.end()
        this.exited = { code, signal }
        this.log.end()
        resolve()
      }),
    )
  }

  tail(n = 15): string {
    return this.lines
      .slice(-n)
      .map((l) => `    ${this.name}| ${l.slice(0, 400)}`)
      .join('\n')
  }

  /** SIGTERM, then SIGKILL when it has not exited within graceMs. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.exited || this.proc.pid === undefined) return
    this.proc.kill('SIGTERM')
    const killed = await Promise.race([this.exit.then(() => true), sleep(graceMs).then(() => false)])
    if (!killed && !this.exited) {
      this.proc.kill('SIGKILL')
      await Promise.race([this.exit, sleep(2000)])
    }
  }
}

export class Children {
  private readonly all = new Set<Child>()
  /** Every pid this bench started, alive or not, with its name (to tell its CPU use from other processes'). */
  readonly pids = new Map<number, string>([[process.pid, 'bench']])

  /** Starts `node --import tsx <script>` from the project root; a compiled `.js` script runs on plain node. */
  start(name: string, script: string, env: Record<string, string>, stdin?: string, nodeArgs: string[] = []): Child {
    const proc = spawn(process.execPath, [...nodeArgs, ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    if (stdin !== undefined) proc.stdin?.end(stdin)
    if (proc.pid !== undefined) this.pids.set(proc.pid, name)
    const child = new Child(name, proc)
    this.all.add(child)
    void child.exit.then(() => this.all.delete(child))
    return child
  }

  async stop(children: Child[]): Promise<void> {
    await Promise.all(children.map((c) => c.stop()))
  }

  async stopAll(): Promise<void> {
    await this.stop([...this.all])
  }

  /** Last resort from a synchronous exit handler. */
  killAllNow(): void {
    for (const c of this.all) if (!c.exited) c.proc.kill('SIGKILL')
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
/** Compiles `root`'s service as production runs it (`npm run build`, the Procfile's `dist/`). */
export function buildDist(root = ROOT): void {
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  })
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, HOST, () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

/** Polls GET url until it answers 200; fails early when the process exits. */
export async function waitForHttp200(url: string, child: Child, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  let last = 'no answer'
  while (Date.now() < until) {
    if (child.exited)
      throw new Error(
        `${child.name} exited (code ${child.exited.code}, signal ${child.exited.signal}) before ${url} answered:\n${child.tail()}`,
      )
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) })
      if (res.status === 200) return
      last = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`
    } catch (err) {
      last = (err as Error).message
    }
    await sleep(200)
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last}):\n${child.tail()}`)
}
