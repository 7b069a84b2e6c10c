// A real Chromium for the web app's tests: Debian's /usr/bin/chromium (or
// CHROMIUM_PATH) driven by playwright-core. `npm test` starts one browser for
// the whole run and every file connects to it (each test opens contexts of its
// own: cookies and storage are never shared); a file run any other way launches
// its own. Playwright gives each launch a fresh temporary profile (the
// --user-data-dir of the research notes) and adds --headless itself.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type BrowserServer, type Locator, type Page } from 'playwright-core'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Where journeys leave their screenshots (gitignored). */
export const OUTPUT_DIR = join(process.cwd(), 'test-output', 'web')

/** Set by test/run.ts to the endpoint of the run's one Chromium. */
export const SHARED_BROWSER_ENV = 'TEST_BROWSER_WS_ENDPOINT'

/** The run's shared Chromium when there is one, else a Chromium of this file's own; close() it either way. */
export function launchBrowser(): Promise<Browser> {
  // Closing a connected browser closes this file's contexts and disconnects; the shared browser runs on.
  const shared = process.env[SHARED_BROWSER_ENV]
  if (shared) return chromium.connect(shared)
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS, headless: true })
}

/** Starts the Chromium that every file of a run connects to (launching one costs each file 1 to 2 s of CPU). */
export function launchSharedBrowser(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: CHROMIUM_PATH, args: FLAGS, headless: true })
}

export interface Tab {
  context: BrowserContext
  page: Page
  /** Console errors, uncaught exceptions and CSP violations seen so far (a clean journey has none). */
  problems: string[]
}

/** A fresh context (its own cookies) and page, at a desktop width unless told. */
export async function openTab(browser: Browser, width = 1440, height = 900): Promise<Tab> {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 })
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  return { context, page, problems }
}

/** A fresh tab signed in as a user from the test factories: their session cookie is set for `base`. */
export async function signedInTab(
  browser: Browser,
  base: string,
  user: { session: { cookie: string } },
  width?: number,
  height?: number,
): Promise<Tab> {
  const tab = await openTab(browser, width, height)
  const [name, value] = user.session.cookie.split('=')
  await tab.context.addCookies([{ name, value, url: base }])
  return tab
}

/**
 * Whether the locator shows within the page's timeout (or `timeout` ms): waits for it, where `isVisible()` answers
 * at once and so passes or fails on how fast the page happened to draw. For `t.true(await visible(x), ...)`.
 */
export function visible(locator: Locator, timeout?: number): Promise<boolean> {
  return locator.waitFor({ state: 'visible', timeout }).then(
    () => true,
    () => false,
  )
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(OUTPUT_DIR, { recursive: true })
  const path = join(OUTPUT_DIR, `${name}.png`)
  await page.screenshot({ path, fullPage })
  return path
}

/** Signs up through the page, as a person would; leaves the tab on the keys page. */
export async function signUpInBrowser(page: Page, base: string, email: string, password = 'correct horse battery'): Promise<void> {
  await page.goto(`${base}/signup`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Create account' }).click()
  await page.waitForURL(/\/keys/)
}

/**
 * Holds the mouse still over the page's chart and reads the legend's value of series `n` (0: the time) before and
 * after the next poll draws the chart anew (the plot drawn now is marked; the next poll, every 2 s while the tab is
 * in use, replaces it).
 */
export async function legendValueAcrossRedraw(page: Page, n: number): Promise<{ before: string | null; after: string | null }> {
  const over = page.locator('.chart .u-over')
  // A poll may replace the plot between finding it and measuring it (no box then): measure the new one.
  let box = null
  for (let i = 0; i < 10 && !box; i++) {
    await over.waitFor()
    box = await over.boundingBox()
  }
  if (!box) throw new Error('the chart kept being replaced while its position was read')
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2)
  const value = page.locator('.chart .u-legend .u-series').nth(n).locator('.u-value')
  await page.waitForFunction((i) => document.querySelectorAll('.chart .u-legend .u-series .u-value')[i]?.textContent !== '—', n)
  const before = await value.textContent()
  await page.evaluate(() => document.querySelector('.chart .uplot')!.setAttribute('data-old', ''))
  await page.waitForFunction(() => document.querySelector('.chart .uplot:not([data-old])') !== null)
  return { before, after: await value.textContent() }
}
