// Numbers, times and ages the way a person reads them.

export function num(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—'
  const abs = Math.abs(n)
  if (abs >= 1e12) return `${(n / 1e12).toFixed(2)}T`
  if (abs >= 1e9) return `${(n / 1e9).toFixed(2)}G`
  if (abs >= 1e6) return `${(n / 1e6).toFixed(2)}M`
  if (abs >= 1e4) return `${(n / 1e3).toFixed(1)}k`
  // Thousands separated below 10k too, so "+5,782" reads like the "23.4k" beside it.
  if (Number.isInteger(n)) return n.toLocaleString('en-US')
  const digits = abs >= 100 ? 1 : 2
  return abs >= 1 ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : n.toPrecision(3)
}

export const full = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 6 })

/** "12 s ago", "5 min ago", "3 h ago", "2 days ago". */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never'
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 172_800) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86_400)} days ago`
}

export { when } from './clock.js'

export function pct(cur: number, prev: number): string {
  if (!prev) return cur ? 'new' : '—'
  const p = ((cur - prev) / Math.abs(prev)) * 100
  return `${p > 0 ? '+' : ''}${p.toFixed(Math.abs(p) < 10 ? 1 : 0)}%`
}
