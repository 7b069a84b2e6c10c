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
export function formatNumber(x: number, opts: { percent?: boolean; signed?: boolean } = {}): string {
  const abs = Math.abs(x)
  const body = opts.percent ? oneDecimal.format(abs) : abs !== 0 && abs < 1 ? small.format(abs) : whole.format(abs)
  const sign = x < 0 && body.replace(/[0.,]/g, '') !== '' ? '-' : opts.signed && x > 0 ? '+' : ''
  return `${sign}${body}${opts.percent ? '%' : ''}`
}

/** A Unix time as answers show it, on the wall clock of `zone`: ISO date, then HH:MM and the zone's name. */
export function formatTime(unixSeconds: number, withTime = true, zone = 'UTC'): string {
  const iso = new Date(new Clock(zone).wall(unixSeconds * 1000)).toISOString()
  return withTime ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} ${zone}` : iso.slice(0, 10)
}
