// Reference A: a bare Koa app that parses the same form body as the service's
// /ez (with koa-body) and answers the legacy success envelope, doing nothing
// else. Run as its own process: `PORT=... node --import tsx bench/koa-ref.ts`.
import Koa from 'koa'
import { koaBody } from 'koa-body'

const app = new Koa()
app.use(koaBody())
app.use((ctx) => {
  ctx.body = { status: 200, msg: 'ok' }
})
const server = app.listen(Number(process.env.PORT), '127.0.0.1')
server.keepAliveTimeout = 65_000
process.on('SIGTERM', () => {
  server.close()
  server.closeAllConnections()
  process.exit(0)
})
