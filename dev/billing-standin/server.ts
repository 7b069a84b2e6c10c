// A local stand-in for the payment provider (docs/decisions.md §14): it speaks the
// provider's REST protocol for exactly the calls the service makes (customers,
// checkout sessions, portal sessions, subscriptions), serves the hosted
// checkout and portal pages, and sends signed events to the service's webhook.
// `npm run dev` starts it when no STRIPE_SECRET_KEY is set; the tests drive it,
// including deliveries twice, late, out of order, badly signed and stale.
// It lives beside the billing code whose calls it mirrors, so that a change to
// those calls shows what to change here; only dev/dev.ts and the tests import it.
import { createHmac, randomBytes } from 'node:crypto'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseProviderForm } from './form.js'
import { checkoutPage, PAGE_CSP, portalPage, type PriceView } from './pages.js'

type Obj = Record<string, any>

export interface StandinEvent {
  id: string
  type: string
  created: number
  /** The event exactly as serialised for delivery (the body a delivery signs). */
  body: string
}

export interface Delivery {
  eventId: string
  status: number
  body: string
}

export interface StandinOptions {
  /** The key the service must present (Authorization: Bearer); any sk_ key when unset. */
  secretKey?: string
  webhookSecret: string
  /** Where events go (the service's /api/payments/webhook); settable later with setWebhookUrl. */
  webhookUrl?: string
  /** 'auto' sends each event as it happens (retrying a failed delivery a few times); 'manual' only records them. */
  deliver?: 'auto' | 'manual'
  /** The prices the stand-in sells, shown on its pages. Unknown prices are refused like the provider does. */
  prices: PriceView[]
  port?: number
  log?: (line: string) => void
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`
const nowS = () => Math.floor(Date.now() / 1000)
const MONTH = 30 * 86_400

class StandinError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly code?: string,
  ) {
    super(message)
  }
}
const missing = (what: string, value: unknown) =>
  new StandinError(404, `No such ${what}: '${String(value)}'`, 'invalid_request_error', 'resource_missing')
const required = (param: string) => new StandinError(400, `Missing required param: ${param}.`, 'invalid_request_error', 'parameter_missing')

/** The provider's signature header: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">. */
export function signPayload(body: string, secret: string, timestamp = nowS()): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}

export class PaymentStandin {
  readonly customers = new Map<string, Obj>()
  readonly sessions = new Map<string, Obj>()
  readonly portals = new Map<string, Obj>()
  readonly subscriptions = new Map<string, Obj>()
  readonly events: StandinEvent[] = []
  readonly deliveries: Delivery[] = []
  /** Every API request the service made, for tests: method, path and form fields. */
  readonly requests: Array<{ method: string; path: string; form: Obj }> = []
  url = ''
  private readonly idempotent = new Map<string, { status: number; body: string }>()
  private readonly held = new Set<string>()
  private server?: http.Server
  private sending: Promise<void> = Promise.resolve()

  constructor(private readonly opts: StandinOptions) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve, reject) => this.server!.once('error', reject).listen(this.opts.port ?? 0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  async close(): Promise<void> {
    await this.sending
    this.server?.closeAllConnections()
    await new Promise((r) => this.server?.close(r))
  }

  setWebhookUrl(url: string): void {
    this.opts.webhookUrl = url
  }

  /** Records this customer's events without sending them, so that a test delivers them itself (late, twice, out of order). */
  hold(customerId: string): void {
    this.held.add(customerId)
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', this.url)
    try {
      if (url.pathname.startsWith('/v1/')) return this.api(req, res, url, raw)
      return this.pages(req, res, url, raw)
    } catch (err) {
      const e = err instanceof StandinError ? err : new StandinError(500, (err as Error).message, 'api_error')
      if (url.pathname.startsWith('/v1/')) return this.json(res, e.status, { error: { type: e.type, code: e.code, message: e.message } })
      res.writeHead(e.status, { 'content-type': 'text/plain' }).end(e.message)
    }
  }

  private json(res: ServerResponse, status: number, body: unknown, text = JSON.stringify(body)): void {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') }).end(text)
  }

  private api(req: IncomingMessage, res: ServerResponse, url: URL, raw: string): void {
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
    if (!auth || (this.opts.secretKey ? auth !== this.opts.secretKey : !auth.startsWith('sk_'))) {
      throw new StandinError(401, 'Invalid API Key provided.', 'invalid_request_error')
    }
    const form = req.method === 'GET' ? Object.fromEntries(url.searchParams) : parseProviderForm(raw)
    this.requests.push({ method: req.method ?? '', path: url.pathname, form })
    // The provider replays the first answer to a repeated Idempotency-Key.
    const key = req.method === 'POST' ? req.headers['idempotency-key'] : undefined
    const replay = typeof key === 'string' ? this.idempotent.get(key) : undefined
    if (replay) return this.json(res, replay.status, null, replay.body)
    const body = JSON.stringify(this.route(req.method ?? 'GET', url.pathname, form))
    if (typeof key === 'string') this.idempotent.set(key, { status: 200, body })
    this.json(res, 200, null, body)
  }

  private route(method: string, path: string, f: Obj): Obj {
    const m = (re: RegExp) => re.exec(path)
    let p: RegExpExecArray | null
    if (method === 'POST' && path === '/v1/customers') return this.createCustomer(f)
    if (method === 'GET' && (p = m(/^\/v1\/customers\/([^/]+)$/)))
      return (
        this.customers.get(p[1]) ??
        (() => {
          throw missing('customer', p![1])
        })()
      )
    if (method === 'POST' && path === '/v1/checkout/sessions') return this.createCheckout(f)
    if (method === 'GET' && (p = m(/^\/v1\/checkout\/sessions\/([^/]+)$/)))
      return (
        this.sessions.get(p[1]) ??
        (() => {
          throw missing('checkout.session', p![1])
        })()
      )
    if (method === 'POST' && path === '/v1/billing_portal/sessions') return this.createPortal(f)
    if (method === 'GET' && path === '/v1/subscriptions') return this.listSubscriptions(f)
    if (method === 'GET' && (p = m(/^\/v1\/subscriptions\/([^/]+)$/)))
      return (
        this.subscriptions.get(p[1]) ??
        (() => {
          throw missing('subscription', p![1])
        })()
      )
    throw new StandinError(404, `Unrecognized request URL (${method}: ${path}).`)
  }

  private createCustomer(f: Obj): Obj {
    const c = { id: id('cus'), object: 'customer', email: f.email ?? null, metadata: f.metadata ?? {}, created: nowS(), livemode: false }
    this.customers.set(c.id, c)
    return c
  }

  private price(priceId: unknown): PriceView {
    const price = this.opts.prices.find((p) => p.id === priceId)
    if (!price) throw missing('price', priceId)
    return price
  }

  private createCheckout(f: Obj): Obj {
    if (f.mode !== 'subscription') throw new StandinError(400, 'The stand-in supports mode=subscription only.')
    if (!f.customer) throw required('customer')
    if (!this.customers.has(f.customer)) throw missing('customer', f.customer)
    for (const k of ['success_url', 'cancel_url']) if (!f[k]) throw required(k)
    const item = f.line_items?.[0]
    if (!item?.price) throw required('line_items[0][price]')
    this.price(item.price)
    const s = {
      id: id('cs_test'),
      object: 'checkout.session',
      mode: 'subscription',
      status: 'open',
      payment_status: 'unpaid',
      customer: f.customer,
      client_reference_id: f.client_reference_id ?? null,
      metadata: f.metadata ?? {},
      success_url: f.success_url,
      cancel_url: f.cancel_url,
      subscription: null,
      livemode: false,
      created: nowS(),
      url: '',
      // Kept for completing the session; not part of what the provider returns.
      _price: item.price,
      _subscription_metadata: f.subscription_data?.metadata ?? {},
    }
    s.url = `${this.url}/checkout/${s.id}`
    this.sessions.set(s.id, s)
    return this.public(s)
  }

  private createPortal(f: Obj): Obj {
    if (!f.customer) throw required('customer')
    if (!this.customers.has(f.customer)) throw missing('customer', f.customer)
    const s = {
      id: id('bps'),
      object: 'billing_portal.session',
      customer: f.customer,
      return_url: f.return_url ?? null,
      created: nowS(),
      livemode: false,
      url: '',
    }
    s.url = `${this.url}/portal/${s.id}`
    this.portals.set(s.id, s)
    return s
  }

  private listSubscriptions(f: Obj): Obj {
    const status = f.status ?? 'active'
    const limit = Math.min(100, Number(f.limit ?? 10))
    const all = [...this.subscriptions.values()]
      .reverse() // newest first, as the provider lists them
      .filter(
        (s) =>
          (!f.customer || s.customer === f.customer) &&
          (status === 'all' || s.status === status || (status === 'ended' && ['canceled', 'incomplete_expired'].includes(s.status))),
      )
    return { object: 'list', url: '/v1/subscriptions', has_more: all.length > limit, data: all.slice(0, limit) }
  }

  private public(o: Obj): Obj {
    return Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('_')))
  }

  // ---------------------------------------------------------------- hosted pages

  private pages(req: IncomingMessage, res: ServerResponse, url: URL, raw: string): void {
    const html = (body: string): void =>
      void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': PAGE_CSP }).end(body)
    const redirect = (to: string): void => void res.writeHead(303, { location: to }).end()
    let p: RegExpExecArray | null
    if ((p = /^\/checkout\/([^/]+)$/.exec(url.pathname))) {
      const s = this.sessions.get(p[1])
      if (!s) throw new StandinError(404, 'No such checkout session.')
      if (req.method === 'POST') return redirect(this.complete(s.id))
      return html(
        checkoutPage(
          { id: s.id, status: s.status, email: this.customers.get(s.customer)?.email ?? '', cancelUrl: s.cancel_url },
          this.price(s._price),
        ),
      )
    }
    if ((p = /^\/portal\/([^/]+)(?:\/(switch|cancel|renew|fail|fail-final))?$/.exec(url.pathname))) {
      const portal = this.portals.get(p[1])
      if (!portal) throw new StandinError(404, 'No such portal session.')
      const base = `${this.url}/portal/${portal.id}`
      if (req.method === 'POST' && p[2]) {
        const form = new URLSearchParams(raw)
        const sub = this.subscriptions.get(form.get('subscription') ?? '')
        if (!sub || sub.customer !== portal.customer) throw new StandinError(404, 'No such subscription.')
        if (p[2] === 'switch') this.switchPrice(sub.id, form.get('price') ?? '')
        if (p[2] === 'cancel') this.cancel(sub.id)
        if (p[2] === 'renew') this.renew(sub.id)
        if (p[2] === 'fail' || p[2] === 'fail-final') this.failPayment(sub.id, { final: p[2] === 'fail-final' })
        // A plan change or cancellation goes back to the service (which syncs on return); simulations stay here.
        return redirect(['switch', 'cancel'].includes(p[2]) && portal.return_url ? portal.return_url : base)
      }
      const subs = [...this.subscriptions.values()]
        .filter((s) => s.customer === portal.customer)
        .map((s) => ({
          id: s.id,
          status: s.status,
          price: this.price(s.items.data[0].price.id),
          periodEnd: new Date(s.items.data[0].current_period_end * 1000),
        }))
      return html(portalPage(base, subs, this.opts.prices, portal.return_url ?? '/'))
    }
    throw new StandinError(404, 'Not found.')
  }

  // ---------------------------------------------------------------- what happens at the provider

  private subscriptionObject(customer: string, priceId: string, metadata: Obj): Obj {
    const price = this.price(priceId)
    const start = nowS()
    const sub: Obj = {
      id: id('sub'),
      object: 'subscription',
      customer,
      status: 'active',
      created: start,
      start_date: start,
      metadata,
      cancel_at_period_end: false,
      canceled_at: null,
      ended_at: null,
      latest_invoice: null,
      livemode: false,
      items: { object: 'list', has_more: false, url: '/v1/subscription_items', data: [] as Obj[] },
    }
    sub.items.data.push({
      id: id('si'),
      object: 'subscription_item',
      subscription: sub.id,
      quantity: 1,
      current_period_start: start,
      current_period_end: start + MONTH,
      price: {
        id: price.id,
        object: 'price',
        nickname: price.label,
        unit_amount: price.amount * 100,
        currency: 'usd',
        recurring: { interval: 'month' },
      },
    })
    return sub
  }

  private invoice(sub: Obj, status: 'paid' | 'open', reason: string): Obj {
    const inv = {
      id: id('in'),
      object: 'invoice',
      customer: sub.customer,
      status,
      billing_reason: reason,
      amount_due: sub.items.data[0].price.unit_amount,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      created: nowS(),
      livemode: false,
    }
    sub.latest_invoice = inv.id
    return inv
  }

  /** Pays a checkout session (the POST of its page): the subscription starts; returns the success URL. */
  complete(sessionId: string): string {
    const s = this.sessions.get(sessionId)
    if (!s) throw new StandinError(404, 'No such checkout session.')
    if (s.status === 'open') {
      const sub = this.subscriptionObject(s.customer, s._price, s._subscription_metadata)
      this.subscriptions.set(sub.id, sub)
      Object.assign(s, { status: 'complete', payment_status: 'paid', subscription: sub.id })
      const inv = this.invoice(sub, 'paid', 'subscription_create')
      this.emit('customer.subscription.created', sub)
      this.emit('invoice.paid', inv)
      this.emit('checkout.session.completed', this.public(s))
    }
    return String(s.success_url).replace('{CHECKOUT_SESSION_ID}', s.id)
  }

  private sub(subId: string): Obj {
    const sub = this.subscriptions.get(subId)
    if (!sub) throw new StandinError(404, `No such subscription: ${subId}`)
    return sub
  }

  /** A renewal that is paid: a new period, the subscription active again. */
  renew(subId: string): void {
    const sub = this.sub(subId)
    const item = sub.items.data[0]
    item.current_period_start = item.current_period_end
    item.current_period_end += MONTH
    sub.status = 'active'
    this.emit('invoice.paid', this.invoice(sub, 'paid', 'subscription_cycle'))
    this.emit('customer.subscription.updated', sub)
  }

  /** A renewal whose payment fails: past due while retried, or unpaid once the provider gives up (`final`). */
  failPayment(subId: string, { final = false } = {}): void {
    const sub = this.sub(subId)
    sub.status = final ? 'unpaid' : 'past_due'
    this.emit('invoice.payment_failed', this.invoice(sub, 'open', 'subscription_cycle'))
    this.emit('customer.subscription.updated', sub)
  }

  /** Cancels at once (the portal's cancel). */
  cancel(subId: string): void {
    const sub = this.sub(subId)
    Object.assign(sub, { status: 'canceled', canceled_at: nowS(), ended_at: nowS() })
    this.emit('customer.subscription.deleted', sub)
  }

  /** Moves the subscription to another price (the portal's plan change). */
  switchPrice(subId: string, priceId: string): void {
    const sub = this.sub(subId)
    const price = this.price(priceId)
    Object.assign(sub.items.data[0].price, { id: price.id, nickname: price.label, unit_amount: price.amount * 100 })
    this.emit('customer.subscription.updated', sub)
  }

  // ---------------------------------------------------------------- events

  private emit(type: string, object: Obj): StandinEvent {
    const created = nowS()
    const event = {
      id: id('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created,
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: structuredClone(object) },
    }
    const e = { id: event.id, type, created, body: JSON.stringify(event) }
    this.events.push(e)
    if ((this.opts.deliver ?? 'auto') === 'auto' && !this.held.has(object.customer))
      this.sending = this.sending.then(() => this.deliverWithRetries(e))
    return e
  }

  private async deliverWithRetries(e: StandinEvent): Promise<void> {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const d = await this.deliver(e).catch((err: Error) => ({ eventId: e.id, status: 0, body: err.message }))
      if (d.status >= 200 && d.status < 300) return
      this.opts.log?.(`payment stand-in: delivery of ${e.type} ${e.id} answered ${d.status || d.body}; retrying`)
      await new Promise((r) => setTimeout(r, 500 * attempt))
    }
  }

  /**
   * Sends one event to the webhook, signed like the provider signs it. Tests pass a wrong `secret`, an old
   * `timestamp` or a changed `body` to see them refused.
   */
  async deliver(e: StandinEvent, o: { secret?: string; timestamp?: number; body?: string } = {}): Promise<Delivery> {
    if (!this.opts.webhookUrl) throw new Error('no webhook URL set')
    const body = o.body ?? e.body
    // Always the event's own body signed: a changed `body` must fail verification.
    const signature = signPayload(e.body, o.secret ?? this.opts.webhookSecret, o.timestamp)
    const res = await fetch(this.opts.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
      body,
    })
    const d = { eventId: e.id, status: res.status, body: await res.text() }
    this.deliveries.push(d)
    return d
  }

  /** A customer's events, oldest first (of one type when given). */
  eventsOf(customerId: string, type?: string): StandinEvent[] {
    return this.events.filter((e) => JSON.parse(e.body).data.object.customer === customerId && (!type || e.type === type))
  }
}

/** Starts a stand-in; close() it when done. */
export async function startPaymentStandin(opts: StandinOptions): Promise<PaymentStandin> {
  return new PaymentStandin(opts).start()
}
