// The v1 JSON API as the pages call it: the session cookie travels by itself,
// writes add X-Service-CSRF from the shell, and every error becomes an
// ApiError carrying the problem body's `detail` (shown to the person as is).

/** What the server put on <body data-*>: base URL, CSRF token, plan, e-mail, page parameters. */
export const pageData = document.body.dataset as Record<string, string | undefined>

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code?: string,
    readonly errors?: Array<{ path?: string; index?: number; detail?: string; message?: string }>,
  ) {
    super(detail)
  }
}

/** A JSON body, or a file sent as it is with its own content type. */
export async function api<T = any>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
  // No Accept header: a GET must look like the shell's <link rel=preload> of it to be served from it.
  const headers: Record<string, string> = {}
  const raw = body instanceof Blob
  if (body !== undefined) headers['content-type'] = raw ? (contentType ?? 'application/octet-stream') : 'application/json'
  if (method !== 'GET' && pageData.csrf) headers['x-service-csrf'] = pageData.csrf
  let res: Response
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
      credentials: 'same-origin',
    })
  } catch {
    throw new ApiError(0, 'The service could not be reached. Check your connection; this page retries by itself.')
  }
  const text = await res.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  if (res.ok) return json as T
  // A session that ended elsewhere (sign-out, expiry) sends the person back to sign in, then here.
  if (res.status === 401 && pageData.csrf) {
    location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`)
  }
  throw new ApiError(res.status, json?.detail ?? `${res.status} ${res.statusText || 'error'}`, json?.code, json?.errors)
}

/** The field a validation error points at (`body.channel_config.webhook_url` -> `channel_config.webhook_url`). */
export function fieldErrors(err: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (err instanceof ApiError && err.errors) {
    for (const e of err.errors) if (e.path) out[e.path.replace(/^body\./, '')] ??= e.message ?? e.detail ?? ''
  }
  return out
}

export const statPath = (name: string) => `/api/v1/stats/${encodeURIComponent(name)}`
