// The one number formatter of answers: thousands separators, at most two
// decimals (three significant digits below 1), no abbreviations, so that the
// verifier can read every figure back at the precision it was shown.
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

const dateTimes = new Map<string, Intl.DateTimeFormat>()

/** A Unix time as answers show it, on the wall clock of `zone`: ISO date, then HH:MM and the zone's name. */
export function formatTime(unixSeconds: number, withTime = true, zone = 'UTC'): string {
  let f = dateTimes.get(zone)
  if (!f) dateTimes.set(zone, (f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' })))
  const p = Object.fromEntries(f.formatToParts(unixSeconds * 1000).map((x) => [x.type, x.value]))
  const date = `${p.year}-${p.month}-${p.day}`
  return withTime ? `${date} ${p.hour}:${p.minute} ${zone}` : date
}
