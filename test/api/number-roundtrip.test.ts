import test from 'ava'
import fc from 'fast-check'
import { appSuite } from '../helpers/suite.js'
import { createKey, signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { settle } from '../helpers/storage.js'

const app = appSuite({ workers: true })

// Every accepted input, however it was formatted, is stored as exactly the number it denotes.
test('2.2 property: an accepted count or value is stored as exactly the parsed number, on /ez and on v1', async (t) => {
  const user = await signUp(app.url)
  await app.sql`update accounts set plan = 'business' where id = ${user.accountId}`
  const { key } = await createKey(app.url, user)
  const finite = fc.double({ min: -1e15, max: 1e15, noNaN: true, noDefaultInfinity: true })
  const formatted = fc
    .oneof(
      finite.map((x) => ({ text: String(x), json: x as number | string, expect: x })),
      finite.map((x) => ({ text: x.toExponential(), json: x.toExponential(), expect: Number(x.toExponential()) })),
      fc
        .tuple(finite, fc.integer({ min: 0, max: 6 }))
        .map(([x, d]) => ({ text: ` ${x.toFixed(d)} `, json: x.toFixed(d), expect: Number(x.toFixed(d)) })),
    )
    .filter((c) => Math.abs(c.expect) <= 1e15)
  let i = 0
  await fc.assert(
    fc.asyncProperty(formatted, fc.boolean(), async (c, viaV1) => {
      const name = `rt.${i++}`
      const res = viaV1
        ? await request(app.url, `/api/v1/stats/${name}/value`, { json: { value: c.json }, bearer: key })
        : await request(app.url, '/ez', { form: `ezkey=${key}&stat=${name}&value=${encodeURIComponent(c.text)}` })
      if (res.status !== 200) return false
      await settle(app)
      const [row] = await app.sql<{ value: number }[]>`
      select p.value from stats s cross join lateral stat_points(s.id, '-infinity', 'infinity') p where s.account_id = ${user.accountId} and s.name = ${name}`
      return Object.is(row.value, c.expect === 0 ? 0 : c.expect)
    }),
    { numRuns: 60 },
  )
  t.pass()
})
