// The verifier: every numeric claim in an answer's final text must equal a
// number in `data` at the precision it is shown with. Dates (YYYY-MM-DD) and
// times (HH:MM) are not claims, and neither are the stat names and period
// labels the answer quotes (passed in as `quoted`). It runs on every answer.
import type { DataRecord } from './schema.js'

export interface Verdict {
  ok: boolean
  /** Numeric claims found. */
  checked: number
  /** Claims with no matching number in data, as written. */
  misses: string[]
}

const NUMBER = /(^|[^\w.])([-+−]?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(%?)/g
const GROUNDED_FIELDS = ['value', 'min', 'max', 'n'] as const

/** The numbers an answer may state: each record's value, min, max and observation count. */
function groundable(data: DataRecord[]): number[] {
  const out: number[] = []
  for (const r of data) for (const f of GROUNDED_FIELDS) if (typeof r[f] === 'number' && Number.isFinite(r[f])) out.push(r[f] as number)
  return out
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export function verify(text: string, data: DataRecord[], quoted: string[] = []): Verdict {
  let t = text
  // Longest first, so a label holding a shorter one is removed whole.
  for (const q of [...quoted].sort((a, b) => b.length - a.length)) if (q) t = t.replace(new RegExp(escapeRe(q), 'gi'), ' ')
  t = t.replace(/\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?/g, ' ').replace(/\b\d{1,2}:\d{2}(?::\d{2})?\b/g, ' ')
  const known = groundable(data)
  const misses: string[] = []
  let checked = 0
  for (const m of t.matchAll(NUMBER)) {
    checked++
    const sign = m[2] === '-' || m[2] === '−' ? -1 : m[2] === '+' ? 1 : 0
    const digits = m[3].replace(/,/g, '')
    const decimals = digits.includes('.') ? digits.length - digits.indexOf('.') - 1 : 0
    const claim = Number(digits)
    const tolerance = 0.5 * 10 ** -decimals + 1e-9 * Math.abs(claim)
    const ok = known.some((v) => (sign === 0 ? Math.abs(Math.abs(v) - claim) : Math.abs(v - sign * claim)) <= tolerance)
    if (!ok) misses.push(`${m[2]}${m[3]}${m[4]}`)
  }
  return { ok: misses.length === 0, checked, misses }
}

/** The verdict as the response's `verifier` text. */
export function describeVerdict(v: Verdict): string {
  if (!v.ok) return `failed: ${v.misses.length} ungrounded number${v.misses.length === 1 ? '' : 's'} (${v.misses.join(', ')})`
  return v.checked ? `passed: ${v.checked} of ${v.checked} numbers grounded in data` : 'passed: the answer states no number'
}
