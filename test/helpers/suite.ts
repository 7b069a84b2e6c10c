// The set-up every HTTP and browser test file shares: one test app for the file (a database and a Redis
// prefix of its own, test/helpers/app.ts), its workers when asked, and for browser files the run's Chromium
// (test/helpers/browser.ts) with the page bundles built before the first test; all closed after the file.
//
//   const app = appSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '1' } })
//   test('...', async (t) => { const res = await request(app.url, '/api/v1/health') })
//
//   const web = webSuite({ workers: true, env: { ALERT_EVAL_INTERVAL_SECONDS: '1' } })
//   test('...', async (t) => { const { page } = await openTab(web.browser); await page.goto(`${web.app.url}/`) })
//
// The app and its fields are set by the file's before hook: read them inside tests and hooks, not at the top of
// the file. What a file needs besides (a mail or webhook receiver, the payment stand-in, a Redis of its own) it
// starts in a before hook of its own declared first, and `env` as a function then reads its address: the
// suite's hook is a serial one, which ava starts only once every hook declared before it has finished (plain
// hooks run concurrently), and a hook declared after it (more set-up on the running app) runs after it. To stop
// such a thing only once the app has closed (an SMTP receiver's close waits for the app's open connections; a
// Redis stopped under running workers leaves them reconnecting), a file declares `test.serial.after.always`
// after the suite: a serial hook waits for every hook declared before it.
import test from 'ava'
import type { Browser } from 'playwright-core'
import { startTestApp, type TestApp } from './app.js'
import { launchBrowser } from './browser.js'

type Env = Record<string, string | undefined>

export interface SuiteOptions {
  /** Settings of the app (and its workers), or a function giving them when the before hook runs. */
  env?: Env | (() => Env)
  /** Start the workers too (ingest, rollups, alerts, deliveries...). */
  workers?: boolean
}

export interface WebSuite {
  readonly app: TestApp
  readonly browser: Browser
}

const envOf = (opts: SuiteOptions) => (typeof opts.env === 'function' ? opts.env() : opts.env) ?? {}

/**
 * An API (and workers when asked) for the file's tests: the returned app stands for the one the before hook
 * starts (each field read passes through to it), so a file declares `const app = appSuite()` once and its tests
 * use `app.url`, `app.sql`... as with a started app.
 */
export function appSuite(opts: SuiteOptions = {}): TestApp {
  let started: TestApp | undefined
  const current = () => {
    if (!started) throw new Error("appSuite: the app starts in the file's before hook; read it inside tests and hooks")
    return started
  }
  test.serial.before(async () => {
    started = await startTestApp(envOf(opts))
    if (opts.workers) await started.startWorkers()
  })
  test.after.always(() => started?.close())
  return {
    get url() {
      return current().url
    },
    get config() {
      return current().config
    },
    get sql() {
      return current().sql
    },
    get api() {
      return current().api
    },
    get logs() {
      return current().logs
    },
    another: (overrides) => current().another(overrides),
    startWorkers: () => current().startWorkers(),
    close: () => current().close(),
  }
}

/** An API (and workers when asked) and a browser for the file's journeys. */
export function webSuite(opts: SuiteOptions = {}): WebSuite {
  const suite = {} as { app: TestApp; browser: Browser }
  test.serial.before(async () => {
    ;[suite.app, suite.browser] = await Promise.all([startTestApp(envOf(opts)), launchBrowser()])
    if (opts.workers) await suite.app.startWorkers()
    // The page bundles are built on a process's first page request: built here, not inside a test's navigation timeout.
    await fetch(`${suite.app.url}/signin`)
  })
  test.after.always(async () => {
    await suite.browser?.close()
    await suite.app?.close()
  })
  return suite
}
