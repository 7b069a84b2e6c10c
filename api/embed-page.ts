// The HTML embed: a small self-contained chart rendered on the server as SVG,
// so the page needs no script at all (and its CSP can forbid every script).
import { esc } from '../shared/html.js'
import type { Bucket } from '../shared/stats/read.js'
import type { Stat } from '../shared/stats/repo.js'
import type { Window } from '../shared/stats/ranges.js'

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  const abs = Math.abs(n)
  if (abs >= 1e9) return `${(n / 1e9).toFixed(1)}G`
  if (abs >= 1e6) return `${(n / 1e6).toFixed(1)}M`
  if (abs >= 1e4) return `${(n / 1e3).toFixed(1)}k`
  return Number.isInteger(n) ? String(n) : n.toFixed(2)
}

/** Allowed to be framed by any site; nothing but inline styles may run. */
export const EMBED_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors *; base-uri 'none'; form-action 'none'"

export function embedPage(stat: Stat, w: Window, points: Bucket[]): string {
  const W = 600,
    H = 220,
    pad = { l: 48, r: 12, t: 12, b: 28 }
  const x0 = w.from.getTime() / 1000,
    x1 = w.to.getTime() / 1000
  const mins = points.map((p) => ('min' in p ? p.min : p.value))
  const maxs = points.map((p) => ('max' in p ? p.max : p.value))
  const lo = Math.min(0, ...mins),
    hi = Math.max(1, ...maxs)
  const sx = (t: number) => pad.l + ((t - x0) / Math.max(1, x1 - x0)) * (W - pad.l - pad.r)
  const sy = (v: number) => H - pad.b - ((v - lo) / (hi - lo || 1)) * (H - pad.t - pad.b)
  const xs = points.map((p) => sx(p.t + w.bucketSeconds / 2).toFixed(1))
  const line = points.map((p, i) => `${xs[i]},${sy(p.value).toFixed(1)}`).join(' ')
  // A gauge's spread within each bucket: a band from min to max behind the mean line (a bar for a lone bucket).
  const band =
    stat.kind !== 'gauge' || !points.length
      ? ''
      : points.length === 1
        ? `<line class="band" x1="${xs[0]}" y1="${sy(maxs[0]).toFixed(1)}" x2="${xs[0]}" y2="${sy(mins[0]).toFixed(1)}" stroke="#bfdbfe" stroke-width="8"/>`
        : `<polygon class="band" fill="#dbeafe" points="${[...points.map((_, i) => `${xs[i]},${sy(maxs[i]).toFixed(1)}`), ...points.map((_, i) => `${xs[i]},${sy(mins[i]).toFixed(1)}`).reverse()].join(' ')}"/>`
  // A line needs two points: a bucket with no neighbour (a new stat's first, or one between gaps) is drawn as a dot.
  const alone = (i: number) => points[i - 1]?.t !== points[i].t - w.bucketSeconds && points[i + 1]?.t !== points[i].t + w.bucketSeconds
  const dots = points
    .map((p, i) => (points.length <= 48 || alone(i) ? `<circle cx="${xs[i]}" cy="${sy(p.value).toFixed(1)}" r="3" fill="#2563eb"/>` : ''))
    .join('')
  const last = points.at(-1)
  const total = points.reduce((s, p) => s + (stat.kind === 'counter' ? p.value : 0), 0)
  const headline = stat.kind === 'counter' ? `${fmt(total)} total` : last ? `${fmt(last.value)} latest` : 'no data'
  const ticks = [lo, (lo + hi) / 2, hi].map((v) => `<text x="${pad.l - 6}" y="${sy(v) + 4}" text-anchor="end">${fmt(v)}</text>`).join('')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(stat.name)}</title><style>
html,body{margin:0;padding:0;font:13px system-ui,sans-serif;color:#222;background:#fff}
.w{padding:8px 10px}h1{font-size:14px;margin:0 0 2px}.m{color:#666;font-size:12px}
svg{width:100%;height:auto;display:block}svg text{font-size:11px;fill:#777}
</style></head><body><div class="w"><h1>${esc(stat.name)}</h1>
<div class="m">${esc(headline)} · last ${esc(w.requested)} · ${esc(stat.kind)}</div>
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(stat.name)} chart">
<line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" stroke="#ddd"/>${ticks}
${points.length ? `${band}<polyline fill="none" stroke="#2563eb" stroke-width="2" points="${line}"/>${dots}` : `<text x="${W / 2}" y="${H / 2}" text-anchor="middle">No data in this range</text>`}
<text x="${pad.l}" y="${H - 8}">${esc(w.from.toISOString().slice(0, 16).replace('T', ' '))} UTC</text>
<text x="${W - pad.r}" y="${H - 8}" text-anchor="end">${esc(w.to.toISOString().slice(0, 16).replace('T', ' '))} UTC</text>
</svg></div></body></html>`
}
