// Billing (docs/decisions.md §5, §9, §14): the plan in force, usage against
// its limits, upgrade through the provider's hosted checkout, and the portal.
import { PAID_PLANS, PLANS, type PlanName } from '../../../shared/plans.js'
import { api } from './lib/api.js'
import { when } from './lib/format.js'
import { ErrorNotice, html, Loading, mount, useEffect, useState } from './lib/ui.js'

interface Billing {
  plan: PlanName
  subscription: { id: string; status: string; past_due: boolean; current_period_end: string | null; in_force: boolean } | null
  synced_at: string | null
}
interface Limit {
  used: number
  limit: number
}
interface Usage {
  stats: Limit
  points_today: Limit
  alerts: Limit
}

const n = (x: number) => x.toLocaleString('en-US')

function BillingPage() {
  const [billing, setBilling] = useState<Billing | null>(null)
  const [usage, setUsage] = useState<Usage | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState('')
  useEffect(() => {
    Promise.all([api<Billing>('GET', '/api/billing'), api<Usage>('GET', '/api/v1/usage')]).then(([b, u]) => {
      setBilling(b)
      setUsage(u)
    }, setError)
  }, [])
  const upgrade = async (plan: string) => {
    setBusy(plan)
    setError(null)
    try {
      location.assign((await api<{ url: string }>('POST', '/api/payments/checkout', { plan })).url)
    } catch (err) {
      setError(err)
      setBusy('')
    }
  }
  const back = new URLSearchParams(location.search).get('billing')
  const current = billing?.plan
  // Only a subscription the plan comes from renews, and is changed in the portal. A canceled one (the provider
  // ends it at once, and the sync drops the plan to free then: shared/billing/sync.ts) renews nothing, and a
  // new plan is a new checkout (the page said "canceled" and "Renews" a date beside each other).
  const sub = billing?.subscription ?? null
  const inForce = sub?.in_force === true
  return html`<h1>Billing</h1>
    ${back === 'updated' ? html`<div class="notice ok" role="status">Thank you: your plan is updated.</div>` : back === 'cancelled' ? html`<div class="notice info" role="status">Checkout cancelled: nothing was charged.</div>` : null}
    <${ErrorNotice} error=${error} />
    ${
      !billing || !usage
        ? error
          ? null
          : html`<${Loading} />`
        : html`
      <dl class="summary"><div><dt>Plan</dt><dd data-testid="plan">${billing.plan}</dd></div>
        <div><dt>Subscription</dt><dd class="small" data-testid="subscription">${
          !sub
            ? 'none'
            : inForce
              ? `${sub.status}${sub.past_due ? ' (payment due)' : ''}`
              : `${sub.status === 'canceled' ? 'Canceled' : `Ended (${sub.status})`}: you are on the free plan; nothing renews`
        }</dd></div>
        ${inForce && sub!.current_period_end ? html`<div><dt>Renews</dt><dd class="small" data-testid="renews">${when(sub!.current_period_end)}</dd></div>` : null}</dl>
      ${sub ? html`<div class="actions"><a class="button secondary" href="/api/billing/portal">${inForce ? 'Manage billing (cards, invoices, cancel)' : 'Past invoices'}</a></div>` : null}
      <h2>Plans</h2>
      <div class="table-wrap"><table class="stack"><thead><tr><th>Plan</th><th class="num">Per month</th><th class="num">Stats</th><th class="num">Points a day</th><th class="num">History</th><th class="num">Alerts</th><th>Anomalies</th><th><span class="sr-only">Choose</span></th></tr></thead><tbody>
        ${Object.values(PLANS).map(
          (p) => html`<tr key=${p.name} class=${p.name === current ? 'current' : ''}>
          <td data-label="Plan" class="row-title">${p.name}${p.name === current ? ' (yours)' : ''}</td><td data-label="Per month" class="num">$${p.priceUsdPerMonth}</td>
          <td data-label="Stats" class="num">${n(p.trackedStats)}</td><td data-label="Points a day" class="num">${n(p.pointsPerDay)}</td>
          <td data-label="History" class="num">${p.retentionDays} days</td><td data-label="Alerts" class="num">${n(p.alerts)}</td><td data-label="Anomalies">${p.anomalyDetection ? 'yes' : 'no'}</td>
          <td data-label="">${
            p.name === current || !(PAID_PLANS as readonly string[]).includes(p.name)
              ? null
              : inForce
                ? html`<a href="/api/billing/portal">Change in the portal</a>`
                : html`<button type="button" disabled=${busy !== ''} onClick=${() => upgrade(p.name)}>${busy === p.name ? 'Opening checkout…' : `Upgrade to ${p.name}`}</button>`
          }</td></tr>`,
        )}
      </tbody></table></div>
      <h2>Usage today</h2>
      <p>${n(usage.stats.used)} of ${n(usage.stats.limit)} stats · ${n(usage.points_today.used)} of ${n(usage.points_today.limit)} points (UTC day) · ${n(usage.alerts.used)} of ${n(usage.alerts.limit)} alerts</p>`
    }`
}

mount(BillingPage)
