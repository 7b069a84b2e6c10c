// After signing in, ?next= is followed only to a page of the app's own origin. Each
// crafted `next` is tried in Chromium through the sign-in form; a server on another origin records whether
// the browser ever reached it.
import test from 'ava'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { openTab } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { webSuite } from '../helpers/suite.js'

let other: http.Server
let otherPort = 0
const reached: string[] = []
test.before(async () => {
  other = http.createServer((req, res) => {
    reached.push(req.url ?? '')
    res.end('other origin')
  })
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
  otherPort = (other.address() as AddressInfo).port
})
test.after.always(() => new Promise<unknown>((r) => other?.close(r)))
const web = webSuite()

async function signInWith(next: string): Promise<string> {
  const user = await signUp(web.app.url)
  const { page, context } = await openTab(web.browser)
  try {
    await page.goto(`${web.app.url}/signin?next=${encodeURIComponent(next)}`)
    await page.getByLabel('E-mail').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    const signinPage = page.url()
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.href !== signinPage)
    await page.waitForLoadState('load')
    return page.url()
  } finally {
    await context.close()
  }
}

const hostile = () => [
  `/\t/127.0.0.1:${otherPort}/x`,
  `/\n/127.0.0.1:${otherPort}/x`,
  `/\\127.0.0.1:${otherPort}/x`,
  `\\/127.0.0.1:${otherPort}/x`,
  `//127.0.0.1:${otherPort}/x`,
  ` //127.0.0.1:${otherPort}/x`,
  `http://127.0.0.1:${otherPort}/x`,
  'javascript:alert(1)',
  // Of our own origin, but resolving to a path that starts `//`, which the browser then reads as another host.
  `/.//127.0.0.1:${otherPort}/x`,
  `${web.app.url}//127.0.0.1:${otherPort}/x`,
  `/x/..//127.0.0.1:${otherPort}/x`,
  `/%2e//127.0.0.1:${otherPort}/x`,
  `/%2E%2E//127.0.0.1:${otherPort}/x`,
  `/./\\127.0.0.1:${otherPort}/x`,
]

test.serial(
  '?next= naming another origin in any spelling the URL parser rewrites lands on /stats, never on the other origin',
  async (t) => {
    for (const next of hostile()) {
      const landed = await signInWith(next)
      t.is(
        new URL(landed).origin,
        new URL(web.app.url).origin,
        `next=${JSON.stringify(next)} stays on the app's origin (landed on ${landed})`,
      )
      t.is(new URL(landed).pathname, '/stats', `next=${JSON.stringify(next)} falls back to /stats`)
    }
    t.deepEqual(reached, [], 'the other origin was never requested')
  },
)

test.serial('?next= naming a page of the app is followed, with its query and fragment', async (t) => {
  const landed = new URL(await signInWith('/alerts?x=1#top'))
  t.is(landed.origin, new URL(web.app.url).origin)
  t.is(landed.pathname + landed.search + landed.hash, '/alerts?x=1#top')
  // An absolute URL of the app's own origin is a page of the app too.
  t.is(new URL(await signInWith(`${web.app.url}/keys`)).pathname, '/keys')
})
