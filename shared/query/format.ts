// The one number formatter of answers: thousands separators, at most two
// decimals (three significant digits below 1), no abbreviations, so that the
// verifier can read every figure back at the precision it was shown.
import { Clock } from '../time/clock.js'

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2, useGrouping: true })
const small = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3, useGrouping: true })
const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, useGrouping: true })

/**
 * A number as answers show it. `percent` shows one decimal and a % sign; `signed` puts + before
 * a positive figure (changes). Never exponent notation, never "1.2k".
 */
export function formatNumber(x: number, opts: { percent?: boolean; signed?: boolean; relError?: number } = {}): string {
  const abs = Math.abs(x)
  const body = opts.percent
    ? oneDecimal.format(abs)
    : opts.relError && abs !== 0
      ? withinError(abs, opts.relError)
      : abs !== 0 && abs < 1
        ? small.format(abs)
        : whole.format(abs)
  const sign = x < 0 && body.replace(/[0.,]/g, '') !== '' ? '-' : opts.signed && x > 0 ? '+' : ''
  return `${sign}${body}${opts.percent ? '%' : ''}`
}

/**
 * A figure known only to within a relative error (a percentile from a sketch: 1 %), with no decimal the error does not
 * support: p95 245.37 within 1 % (2.45 either way) is shown as 245, 12.345 as 12, 1.2345 as 1.2.
 */
function withinError(abs: number, relError: number): string {
  const decimals = Math.min(2, Math.max(0, -Math.floor(Math.log10(abs * relError)) - 1))
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: decimals, useGrouping: true }).format(abs)
}

/** A Unix time as answers show it, on the wall clock of `zone`: ISO date, then HH:MM and the zone's name. */
export function formatTime(unixSeconds: number, withTime = true, zone = 'UTC'): string {
  const iso = new Date(new Clock(zone).wall(unixSeconds * 1000)).toISOString()
  return withTime ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} ${zone}` : iso.slice(0, 10)
}
