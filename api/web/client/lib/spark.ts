// A sparkline as inline SVG (one path; cheaper than a chart per row).
import { html } from './ui.js'

export function Sparkline({
  points,
  from,
  to,
  label,
}: {
  points: Array<{ t: number; value: number }>
  from: number
  to: number
  label: string
}) {
  const W = 120,
    H = 28
  if (!points.length) return html`<span class="muted small">no points</span>`
  const vs = points.map((p) => p.value)
  const lo = Math.min(...vs),
    hi = Math.max(...vs)
  const x = (t: number) => ((t - from) / Math.max(1, to - from)) * W
  const y = (v: number) => (hi === lo ? H / 2 : H - 2 - ((v - lo) / (hi - lo)) * (H - 4))
  if (points.length === 1) {
    return html`<svg class="spark" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label}><circle cx=${x(points[0].t)} cy=${H / 2} r="2.5" /></svg>`
  }
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.value).toFixed(1)}`).join('')
  return html`<svg class="spark" viewBox=${`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label=${label}><path d=${d} /></svg>`
}
