// The members journey in Chromium (docs/decisions.md §23): invite, accept in a second browser context (signing
// up from the link), change the role, the switcher, the audit page, remove; at 1280 and 375 px.
import test from 'ava'
import { openTab, screenshot, signedInTab, visible } from '../helpers/browser.js'
import { signUp } from '../helpers/factories.js'
import { request } from '../helpers/http.js'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js'
import { webSuite } from '../helpers/suite.js'

let smtp: SmtpReceiver
test.before(async () => {
  smtp = await startSmtpReceiver()
})
test.after.always(() => smtp?.close())
const web = webSuite({ env: () => ({ SMTP_URL: smtp.url }) })

for (const width of [1280, 375]) {
  test.serial(`invite, accept in a second context, change the role, switch, audit, remove at ${width} px`, async (t) => {
    const owner = await signUp(web.app.url)
    const invitee = `invitee.${width}.${Date.now()}@example.com`
    const a = await signedInTab(web.browser, web.app.url, owner, width, 900)
    t.teardown(() => a.context.close())
    await a.page.goto(`${web.app.url}/members`)
    await a.page.getByLabel('E-mail').fill(invitee)
    await a.page.getByLabel('Role', { exact: true }).selectOption('viewer')
    await a.page.getByRole('button', { name: 'Send invitation' }).click()
    t.true(await visible(a.page.getByText(`Invitation sent to ${invitee}.`)))
    t.true(await visible(a.page.getByTestId('invitation').filter({ hasText: invitee })))
    const [mail] = await smtp.waitFor(1, (m) => m.to.includes(invitee))
    const link = /(http\S+invitation\?token=[A-Za-z0-9_-]+)/.exec(mail.text)![1]

    // A second context: no login yet; the link leads to sign-in, sign-up from there comes back to the link.
    const b = await openTab(web.browser, width, 900)
    t.teardown(() => b.context.close())
    await b.page.goto(link)
    await b.page.waitForURL(/\/signin\?next=/)
    await b.page.goto(b.page.url().replace('/signin', '/signup'))
    await b.page.getByLabel('E-mail').fill(invitee)
    await b.page.getByLabel('Password').fill('correct horse battery')
    await b.page.getByRole('button', { name: 'Create account' }).click()
    await b.page.waitForURL(/\/invitation\?token=/)
    await b.page.getByRole('button', { name: 'Accept the invitation' }).click()
    await b.page.waitForURL(/\/members/)
    // The switcher: two accounts, the owner's active.
    const switcher = b.page.getByLabel('Account')
    t.true(await visible(switcher))
    t.is(await switcher.locator('option:checked').textContent(), `${owner.email} (viewer)`)

    // The owner makes them a member; the audit page shows who did what.
    await a.page.reload()
    // The only owner's own row offers no other role (the API would refuse it with 409 last_owner).
    t.true(await visible(a.page.getByTestId('member').filter({ hasText: owner.email }).getByTestId('sole-owner')))
    t.is(await a.page.getByLabel(`Role of ${owner.email}`).count(), 0)
    await a.page.getByLabel(`Role of ${invitee}`).selectOption('member')
    t.true(await visible(a.page.getByText(`${invitee} is now member.`)))
    await a.page.goto(`${web.app.url}/audit`)
    const first = a.page.getByTestId('audit-event').first()
    t.true(await visible(first))
    t.regex((await first.textContent()) ?? '', /patchMembersById/)
    t.regex((await first.textContent()) ?? '', new RegExp(owner.email.replace(/[.]/g, '\\.')))
    t.is(
      await a.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      0,
      'no sideways scroll (audit)',
    )

    // Switch back to their own account, then to the owner's again.
    await switcher.selectOption({ label: `${invitee} (owner)` })
    await b.page.waitForLoadState('load')
    t.is(await b.page.getByLabel('Account').locator('option:checked').textContent(), `${invitee} (owner)`)
    await b.page.getByLabel('Account').selectOption({ label: `${owner.email} (member)` })
    await b.page.waitForLoadState('load')
    t.true(await visible(b.page.getByTestId('member').filter({ hasText: owner.email })))
    t.is(
      await b.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      0,
      'no sideways scroll (members)',
    )

    // Removed: the member's next request in their page is refused.
    await a.page.goto(`${web.app.url}/members`)
    await a.page.getByRole('button', { name: `Remove ${invitee}` }).waitFor()
    await screenshot(a.page, `members-${width}`)
    a.page.once('dialog', (d) => d.accept())
    await a.page.getByRole('button', { name: `Remove ${invitee}` }).click()
    t.true(await visible(a.page.getByText(`${invitee} removed.`)))
    await b.page.reload()
    t.true(await visible(b.page.getByText(/no longer a member/)))
    t.deepEqual(a.problems, [])
  })
}

test.serial('the members page leaves an account; the last owner is told to hand ownership on first', async (t) => {
  const alice = await signUp(web.app.url)
  const bob = await signUp(web.app.url)
  // Bob is made a member directly (the invitation journey is the test above) and acts on alice's account.
  await web.app.sql`insert into memberships (account_id, person_id, role) values (${alice.accountId}, ${bob.accountId}, 'admin')`
  t.is((await request(web.app.url, '/api/v1/session/account', { json: { account_id: alice.accountId }, session: bob.session })).status, 200)

  const owner = await signedInTab(web.browser, web.app.url, alice, 1280, 900)
  t.teardown(() => owner.context.close())
  await owner.page.goto(`${web.app.url}/members`)
  owner.page.once('dialog', (d) => d.accept())
  await owner.page.getByRole('button', { name: 'Leave this account' }).click()
  t.true(await visible(owner.page.getByRole('alert').filter({ hasText: /must keep an owner/ })))

  const b = await signedInTab(web.browser, web.app.url, bob, 1280, 900)
  t.teardown(() => b.context.close())
  await b.page.goto(`${web.app.url}/members`)
  t.true(await visible(b.page.getByTestId('member').filter({ hasText: alice.email })))
  b.page.once('dialog', (d) => d.accept())
  await b.page.getByRole('button', { name: 'Leave this account' }).click()
  // The page reloads onto bob's own account: he is its only member.
  await b.page.getByTestId('member').filter({ hasText: alice.email }).waitFor({ state: 'detached' })
  t.true(await visible(b.page.getByTestId('member').filter({ hasText: bob.email })))
  const rows = await web.app.sql`select 1 from memberships where account_id = ${alice.accountId} and person_id = ${bob.accountId}`
  t.is(rows.length, 0)
  t.deepEqual(b.problems, [])
})

test.serial('the keys page makes a write-only key and shows each key’s scope and creator', async (t) => {
  const owner = await signUp(web.app.url)
  const a = await signedInTab(web.browser, web.app.url, owner, 1280, 900)
  t.teardown(() => a.context.close())
  await a.page.goto(`${web.app.url}/keys`)
  await a.page.getByLabel('New key label').fill('telegraf')
  await a.page.getByLabel('Scope').selectOption('write')
  await a.page.getByRole('button', { name: 'Create key' }).click()
  const row = a.page.locator('tr', { hasText: 'telegraf' })
  t.true(await visible(row))
  t.regex((await row.textContent()) ?? '', new RegExp(`write.*${owner.email.replace(/[.]/g, '\\.')}`))
  const [k] = await web.app.sql`select scope, created_by from api_keys where account_id = ${owner.accountId}`
  t.deepEqual({ ...k }, { scope: 'write', created_by: owner.accountId })
})

test.serial(
  "the sole owner's row offers no Remove (the API would answer 409 last_owner); with two owners both may be removed",
  async (t) => {
    const alice = await signUp(web.app.url)
    const bob = await signUp(web.app.url)
    await web.app.sql`insert into memberships (account_id, person_id, role) values (${alice.accountId}, ${bob.accountId}, 'member')`
    const a = await signedInTab(web.browser, web.app.url, alice, 1280, 900)
    t.teardown(() => a.context.close())
    await a.page.goto(`${web.app.url}/members`)
    const row = (email: string) => a.page.getByTestId('member').filter({ hasText: email })
    await row(bob.email)
      .getByRole('button', { name: `Remove ${bob.email}` })
      .waitFor()
    t.true(await visible(row(alice.email)))
    t.is(
      await row(alice.email)
        .getByRole('button', { name: /^Remove / })
        .count(),
      0,
      "no Remove on the sole owner's row",
    )
    t.is(await a.page.getByRole('button', { name: `Remove ${alice.email}` }).count(), 0)
    await screenshot(a.page, 'members-sole-owner')

    // A second owner: either may now be removed, the page offers both.
    await web.app.sql`update memberships set role = 'owner' where account_id = ${alice.accountId} and person_id = ${bob.accountId}`
    await a.page.reload()
    await row(alice.email)
      .getByRole('button', { name: `Remove ${alice.email}` })
      .waitFor()
    t.true(await visible(row(bob.email).getByRole('button', { name: `Remove ${bob.email}` })))
    // Back to one owner: the API still refuses the last one, and the page hides the button again.
    await web.app.sql`update memberships set role = 'admin' where account_id = ${alice.accountId} and person_id = ${bob.accountId}`
    const refused = await request(web.app.url, `/api/v1/members/${alice.accountId}`, { method: 'DELETE', session: alice.session })
    t.is(refused.status, 409)
    t.is(refused.body.code, 'last_owner')
    await a.page.reload()
    await row(bob.email)
      .getByRole('button', { name: `Remove ${bob.email}` })
      .waitFor()
    t.is(
      await row(alice.email)
        .getByRole('button', { name: /^Remove / })
        .count(),
      0,
    )
    t.deepEqual(a.problems, [])
  },
)
