// The stand-in's hosted pages: checkout (the plan and one form that pays) and
// the billing portal (switch plan, cancel, and for development a renewal or a
// failed payment). Plain HTML, no script.
import { esc } from '../../shared/html.js'

export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; base-uri 'none'; frame-ancestors 'none'"

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>
body{font:15px system-ui,sans-serif;color:#222;max-width:34rem;margin:3rem auto;padding:0 1rem}
.note{background:#fff6d6;border:1px solid #e8d48a;padding:.5rem .75rem;border-radius:6px;font-size:13px}
.box{border:1px solid #ddd;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
button{font:inherit;padding:.5rem 1rem;border-radius:6px;border:1px solid #888;background:#f4f4f4;cursor:pointer}
button.primary{background:#2b59c3;color:#fff;border-color:#2b59c3}form{display:inline-block;margin:.25rem .25rem 0 0}
</style></head><body><p class="note">Local payment stand-in for development: no card is charged and nothing leaves this machine.</p>
${body}</body></html>`
}

export interface PriceView {
  id: string
  label: string
  amount: number
}

export function checkoutPage(session: { id: string; status: string; email: string; cancelUrl: string }, price: PriceView): string {
  if (session.status !== 'open')
    return page('Checkout', `<h1>Checkout</h1><div class="box">This checkout is already ${esc(session.status)}.</div>`)
  return page(
    'Checkout',
    `<h1>Subscribe to ${esc(price.label)}</h1>
<div class="box"><p><b>${esc(price.label)}</b>: $${price.amount} per month</p><p>Billed to ${esc(session.email || 'the account')}</p>
<form method="post"><button class="primary" type="submit">Pay $${price.amount}</button></form>
<form method="get" action="${esc(session.cancelUrl)}"><button type="submit">Cancel</button></form></div>`,
  )
}

export interface PortalSubscription {
  id: string
  status: string
  price: PriceView
  periodEnd: Date
}

export function portalPage(base: string, subs: PortalSubscription[], prices: PriceView[], returnUrl: string): string {
  const live = subs.filter((s) => ['active', 'trialing', 'past_due', 'unpaid'].includes(s.status))
  const rows = live
    .map((s) => {
      const switches = prices
        .filter((p) => p.id !== s.price.id)
        .map(
          (p) =>
            `<form method="post" action="${esc(base)}/switch"><input type="hidden" name="subscription" value="${esc(s.id)}"><input type="hidden" name="price" value="${esc(p.id)}"><button type="submit">Switch to ${esc(p.label)} ($${p.amount})</button></form>`,
        )
        .join('')
      const act = (action: string, label: string) =>
        `<form method="post" action="${esc(base)}/${action}"><input type="hidden" name="subscription" value="${esc(s.id)}"><button type="submit">${label}</button></form>`
      return `<div class="box"><p><b>${esc(s.price.label)}</b>, ${esc(s.status)}; current period ends ${esc(s.periodEnd.toISOString().slice(0, 10))}</p>
${switches}<div>${act('cancel', 'Cancel subscription')}</div>
<p style="font-size:13px;color:#666">Simulate: ${act('renew', 'Renewal paid')}${act('fail', 'Renewal payment fails')}${act('fail-final', 'Payment given up (unpaid)')}</p></div>`
    })
    .join('')
  return page(
    'Billing portal',
    `<h1>Billing portal</h1>${rows || '<div class="box">No active subscription.</div>'}
<p><a href="${esc(returnUrl)}">Return to the service</a></p>`,
  )
}
