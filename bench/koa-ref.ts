// Reference A: a bare Koa app that parses the same form body as the service's
// /ez (with koa-body) and answers the legacy success envelope, doing nothing
// else. Run as its own process: `PORT=... node --import tsx bench/koa-ref.ts`;
// bench/single-write-cpu.ts serves the same app in its own process.
import Koa from 'koa'
import { koaBody } from 'koa-body'
import { isMain } from './common.js'

export function koaRef(): Koa {
  const app = new Koa()
  app.use(koaBody())
  app.use((ctx) => {
    ctx.body = { status: 200, msg: 'ok' }
  })
  return app
}

if (isMain(import.meta.url)) {
  const server = koaRef().listen(Number(process.env.PORT), '127.0.0.1')
  server.keepAliveTimeout = 65_000
  process.on('SIGTERM', () => {
    server.close()
    server.closeAllConnections()
    process.exit(0)
  })
}
