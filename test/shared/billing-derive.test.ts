// The plan a customer's subscriptions entitle it to (shared/billing/sync.ts): the state table of docs/billing.md.
import test from 'ava'
import type Stripe from 'stripe'
import { loadConfig } from '../../shared/config.js'
import { derivePlan } from '../../shared/billing/sync.js'

const config = loadConfig({ STRIPE_PRICE_STARTER: 'p_s', STRIPE_PRICE_PRO: 'p_p', STRIPE_PRICE_BUSINESS: 'p_b' })
const sub = (id: string, status: string, price: string, created: number) =>
  ({
    id,
    status,
    created,
    items: { data: [{ price: { id: price }, current_period_end: 1_800_000_000 }] },
  }) as unknown as Stripe.Subscription

const table: Array<[string, string, 'free' | 'starter' | 'pro' | 'business', boolean]> = [
  ['active', 'pro', 'pro', false],
  ['trialing', 'starter', 'starter', false],
  ['past_due', 'business', 'business', true],
  ['canceled', 'pro', 'free', false],
  ['unpaid', 'pro', 'free', false],
  ['incomplete_expired', 'pro', 'free', false],
  ['incomplete', 'pro', 'free', false],
  ['paused', 'pro', 'free', false],
]
const priceOf: Record<string, string> = { starter: 'p_s', pro: 'p_p', business: 'p_b' }
for (const [status, plan, expected, pastDue] of table) {
  test(`a ${status} ${plan} subscription -> ${expected}${pastDue ? ', flagged past due' : ''}`, (t) => {
    const s = derivePlan(config, [sub('sub_1', status, priceOf[plan], 100)])
    t.is(s.plan, expected)
    t.is(s.pastDue, pastDue)
    t.is(s.status, status)
    t.deepEqual(s.currentPeriodEnd, new Date(1_800_000_000_000))
  })
}

test('no subscription at all -> free', (t) => {
  t.like(derivePlan(config, []), { plan: 'free', subscriptionId: null, status: null, pastDue: false })
})

test('a live subscription wins over newer ended ones; among live ones the newest', (t) => {
  t.like(derivePlan(config, [sub('old', 'active', 'p_s', 100), sub('new', 'canceled', 'p_b', 200)]), {
    plan: 'starter',
    subscriptionId: 'old',
  })
  t.like(derivePlan(config, [sub('a', 'active', 'p_s', 100), sub('b', 'active', 'p_p', 200)]), { plan: 'pro', subscriptionId: 'b' })
})

test('a live subscription at a price no setting names is an error (the plan is left alone), not a downgrade', (t) => {
  t.throws(() => derivePlan(config, [sub('x', 'active', 'p_unknown', 100)]), { message: /p_unknown.*STRIPE_PRICE_/ })
  // An ended one at an unknown price is simply free.
  t.is(derivePlan(config, [sub('x', 'canceled', 'p_unknown', 100)]).plan, 'free')
})
