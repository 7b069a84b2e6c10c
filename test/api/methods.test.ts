// Methods the service implements nowhere (TRACE, PROPFIND, ...) are 405 with the path's
// Allow header and a problem body, like a known method on the wrong path; on a path with no route, 404.
// Nothing is stored.
import test from 'ava'
import http from 'node:http'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'

/** node:http, because fetch refuses TRACE (and CONNECT, TRACK) before sending anything. */
function request(base: string, path: string, opts: { method: string; headers?: Record<string, string> }) {
  return new Promise<{ status: number; headers: { get(name: string): string | null }; body: any }>((resolve, reject) => {
    const req = http.request(base + path, { method: opts.method, headers: opts.headers }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString('utf8')))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: {
            get: (name: string) => {
              const v = res.headers[name.toLowerCase()]
              return v === undefined ? null : String(v)
            },
          },
          body: text ? JSON.parse(text) : undefined,
        }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}
import { settledState } from '../helpers/storage.js'

const app = appSuite({ workers: true })

test('TRACE, PROPFIND, MKCOL, LOCK, COPY on routes that exist: 405 problem with Allow; nothing stored', async (t) => {
  const user = await signUp(app.url)
  const { key } = await createKey(app.url, user)
  for (const method of ['TRACE', 'PROPFIND', 'MKCOL', 'LOCK', 'COPY', 'PURGE']) {
    for (const [path, allow] of [
      ['/api/v1/health', ['GET', 'HEAD']],
      [`/ez?ezkey=${key}&stat=s&count=1`, ['GET', 'HEAD', 'OPTIONS', 'POST']],
      ['/api/v1/stats/s/count', ['POST']],
      ['/signin', ['GET', 'HEAD']],
    ] as const) {
      const res = await request(app.url, path, { method, headers: { authorization: `Bearer ${key}` } })
      t.is(res.status, 405, `${method} ${path}`)
      t.deepEqual(res.headers.get('allow')!.split(', ').sort(), [...allow].sort(), `${method} ${path}`)
      t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      t.like(res.body, { status: 405, code: 'method_not_allowed', detail: `method ${method} not allowed on ${path.split('?')[0]}` })
    }
  }
  t.like(await settledState(app, user.accountId), { stats: 0, points: 0, quotaUsed: 0 })
})

test('an unknown method on a path with no route is the 404 problem, without an Allow header', async (t) => {
  const res = await request(app.url, '/api/v1/nothing-here', { method: 'PROPFIND' })
  t.is(res.status, 404)
  t.is(res.headers.get('allow'), null)
  t.is(res.body.code, 'route_not_found')
})
