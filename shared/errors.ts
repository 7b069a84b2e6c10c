// Typed errors with a stable code. The HTTP layer maps them in one middleware
// (api/middleware/errors.ts): problem details on v1, the legacy envelope on /ez, /c, /v.

/** What kind of failure an error is; decides the HTTP status on every route family. */
export type ErrorKind =
  | 'invalid' // malformed input: 400 everywhere
  | 'unauthorized' // missing or bad credentials
  | 'forbidden' // authenticated but not allowed (CSRF, wrong auth kind)
  | 'quota' // plan limit reached
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'too_large'
  | 'unsupported_media_type' // a body that is not the type the route reads (JSON on v1)
  | 'rate_limited'
  | 'unavailable' // a dependency is down; the request may be retried

export const ERROR_STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  quota: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
}

const TITLE: Record<ErrorKind, string> = {
  invalid: 'Bad Request',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  quota: 'Plan limit reached',
  not_found: 'Not Found',
  method_not_allowed: 'Method Not Allowed',
  conflict: 'Conflict',
  too_large: 'Payload Too Large',
  unsupported_media_type: 'Unsupported Media Type',
  rate_limited: 'Too Many Requests',
  unavailable: 'Service Unavailable',
}

/** An expected failure whose message may be shown to the caller verbatim. */
export class AppError extends Error {
  readonly kind: ErrorKind
  readonly code: string
  readonly extra: Record<string, unknown>
  /** Seconds after which a rate-limited caller may retry. */
  retryAfter?: number

  constructor(kind: ErrorKind, code: string, message: string, extra: Record<string, unknown> = {}) {
    super(message)
    this.name = 'AppError'
    this.kind = kind
    this.code = code
    this.extra = extra
  }

  get status(): number {
    return ERROR_STATUS[this.kind]
  }

  get title(): string {
    return TITLE[this.kind]
  }
}

export const invalid = (code: string, message: string, extra?: Record<string, unknown>) => new AppError('invalid', code, message, extra)
export const unauthorized = (message = 'missing or invalid credentials', code = 'unauthorized') =>
  new AppError('unauthorized', code, message)
export const forbidden = (code: string, message: string) => new AppError('forbidden', code, message)
export const notFound = (what: string, code = 'not_found') => new AppError('not_found', code, `${what} not found`)
export const conflict = (code: string, message: string) => new AppError('conflict', code, message)
export const unavailable = (message = 'a dependency is unavailable, retry shortly') => new AppError('unavailable', 'unavailable', message)
export const tooLarge = (message = 'request body too large') => new AppError('too_large', 'body_too_large', message)
export const rateLimited = (retryAfter: number) => {
  const err = new AppError('rate_limited', 'rate_limited', 'rate limit exceeded, slow down')
  err.retryAfter = retryAfter
  return err
}
