// The payment stand-in reads the provider's form encoding (bracketed keys) the way the SDK writes it.
import test from 'ava'
import { parseProviderForm } from '../../dev/billing-standin/form.js'

test('bracketed keys become nested objects; index keys become arrays in order', (t) => {
  const text =
    'mode=subscription&line_items[1][price]=p2&line_items[0][price]=p1&line_items[0][quantity]=1' +
    '&metadata[account_id]=a%20b&subscription_data[metadata][plan]=pro&success_url=https%3A%2F%2Fx%2Fr%3Fs%3D%7BCHECKOUT_SESSION_ID%7D'
  t.deepEqual(parseProviderForm(text), {
    mode: 'subscription',
    line_items: [{ price: 'p1', quantity: '1' }, { price: 'p2' }],
    metadata: { account_id: 'a b' },
    subscription_data: { metadata: { plan: 'pro' } },
    success_url: 'https://x/r?s={CHECKOUT_SESSION_ID}',
  })
})

test('an empty body is an empty object', (t) => {
  t.deepEqual(parseProviderForm(''), {})
})

test('prototype keys are dropped, not assigned', (t) => {
  const parsed = parseProviderForm('__proto__[polluted]=1&metadata[constructor][prototype][polluted]=1&mode=payment')
  t.deepEqual(parsed, { mode: 'payment' })
  t.is(({} as Record<string, unknown>).polluted, undefined)
})
