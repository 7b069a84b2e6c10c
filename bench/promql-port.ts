// A free loopback port for a reference server the bench starts (Prometheus).
import { createServer } from 'node:net'

export async function closedPortNumber(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => srv.close(r))
  return port
}
