// One winston logger writing JSON lines. Redaction of secrets lives here, in
// the logger's format, so no caller has to remember it.
import winston from 'winston'
import type { Config } from './config.js'

const SECRET_FIELDS = new Set([
  'ezkey',
  'ukey',
  'email',
  'password',
  'authorization',
  'cookie',
  'set-cookie',
  'token',
  'key',
  'api_key',
  'csrf_token',
  'x-service-csrf',
  'secret',
  'signing_secret',
])
const REDACTED = '[REDACTED]'

// A parameter whose name, decoded as the routes decode it (percent escapes, `+`), looks like a
// credential: `%65zkey` is `ezkey` to the router, so it is `ezkey` to the redaction too. The idempotency
// key (`ikey`) is not a secret and stays readable.
const CREDENTIAL_NAME = /key|token|secret|pass|auth|session|csrf|signature|email|cookie/i
const NOT_CREDENTIAL = new Set(['ikey'])
// InfluxDB 1.x's `/write?u=...&p=<API key>` (docs/decisions.md §21): `p` is the password.
const CREDENTIAL_EXACT = new Set(['p'])
// `name=value` after the start of a query string, a `&`/`;` separator or whitespace (URLs inside messages).
const PARAM = /(^|[?&;\s])([^=&;\s"'#?]+)=([^&;\s"'#]*)/g

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '))
  } catch {
    return raw
  }
}

export function isCredentialName(raw: string): boolean {
  const name = decodedName(raw).trim().toLowerCase()
  return (CREDENTIAL_NAME.test(name) && !NOT_CREDENTIAL.has(name)) || CREDENTIAL_EXACT.has(name)
}

// An API key's shape (`mk_` + 12 + `_` + 32 letters and digits), wherever it appears: inside another word
// (`xmk_...` in a User-Agent, `amk_...` in a value), after an encoded separator (`%26ezkey%3Dmk_...`,
// `%22mk_...%22`), and with its own characters percent-encoded (`mk%5F...`, `%6Dk_...`), as a client
// may send it and the routes would decode it. No word boundary: a key glued to other text is still a key.
// At least 8 characters of the secret are enough to redact a key cut short.
const ENC = (c: string) =>
  `(?:${c}|%${c
    .charCodeAt(0)
    .toString(16)
    .replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`)})`
const ALNUM = '(?:[A-Za-z0-9]|%(?:3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]))'
const API_KEY_SHAPE = new RegExp(`${ENC('m')}${ENC('k')}${ENC('_')}${ALNUM}{12}${ENC('_')}${ALNUM}{8,}`, 'g')

// Secrets recognised by their shape wherever they appear (a key pasted into a path, a message).
const TEXT_PATTERNS: Array<[RegExp, string]> = [
  [/(Bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`],
  [/((?:Token|Basic)\s+)[^\s"',]+/g, `$1${REDACTED}`],
  [/(service_session=)[^;\s"',]+/gi, `$1${REDACTED}`],
  [API_KEY_SHAPE, `mk_${REDACTED}`],
]

/** Removes secrets from a piece of text (a URL, a referrer, a message). */
export function redactText(text: string): string {
  let out = text.replace(PARAM, (all, sep: string, name: string) => (isCredentialName(name) ? `${sep}${name}=${REDACTED}` : all))
  for (const [pattern, replacement] of TEXT_PATTERNS) out = out.replace(pattern, replacement)
  return out
}

const isSecretField = (k: string) => SECRET_FIELDS.has(k.toLowerCase()) || isCredentialName(k)

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactText(value)
  if (depth > 6 || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1))
  if (value instanceof Error) return { name: value.name, message: redactText(value.message), stack: value.stack && redactText(value.stack) }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = isSecretField(k) ? REDACTED : redactValue(v, depth + 1)
  return out
}

const redact = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level') continue
    info[key] = isSecretField(key) ? REDACTED : redactValue(info[key], 0)
  }
  return info
})

export type Logger = winston.Logger

const LEVEL_COLOUR: Record<string, number> = { error: 31, warn: 33, info: 36, debug: 90 }

/**
 * Short lines for a person at a terminal (development): `12:04:05 info  web GET /api/v1/stats 200 3.1ms`,
 * other fields after the message as key=value. Runs after redaction, like the JSON format.
 */
export function prettyLine(info: Record<string, unknown>, colour: boolean): string {
  const paint = (code: number, text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text)
  const { level, message, timestamp, component, stack, ...rest } = info as Record<string, unknown> & { level: string }
  const time = String(timestamp ?? '').slice(11, 19)
  const head = `${paint(90, time)} ${paint(LEVEL_COLOUR[level] ?? 0, level.padEnd(5))} ${component ? `${component} ` : ''}`
  if (message === 'request' && rest.method) {
    const status = Number(rest.status)
    return `${head}${rest.method} ${rest.url} ${paint(status >= 500 ? 31 : status >= 400 ? 33 : 32, String(status))} ${rest.ms}ms`
  }
  const fields = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
  return `${head}${message}${fields.length ? `  ${paint(90, fields.join(' '))}` : ''}${stack && level === 'error' ? `\n${stack}` : ''}`
}

/** Creates the process logger; tests pass their own stream to capture lines. */
export function createLogger(
  config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>,
  stream?: NodeJS.WritableStream,
): Logger {
  const transport = stream ? new winston.transports.Stream({ stream }) : new winston.transports.Console({ stderrLevels: ['error'] })
  const colour = !stream && Boolean(process.stdout.isTTY)
  const output = config.logFormat === 'pretty' ? winston.format.printf((info) => prettyLine(info, colour)) : winston.format.json()
  return winston.createLogger({
    level: config.logLevel === 'silent' ? 'error' : config.logLevel,
    silent: config.logLevel === 'silent',
    format: winston.format.combine(winston.format.errors({ stack: true }), redact(), winston.format.timestamp(), output),
    transports: [transport],
  })
}
