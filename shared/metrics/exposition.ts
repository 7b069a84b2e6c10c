// Prometheus' text format (version 0.0.4) of a prom-client registry, written here rather than by
// registry.metrics(): that one formats every line through several arrays, an escaping regex per label and a
// template per part, which for the request and job histograms (16 lines per route or queue) was most of the
// text's cost in a scrape that finds the process idle (bench:metrics). The values are prom-client's own
// (getMetricsAsJSON runs each metric's collect); only the writing differs, to the same lines.
import type { Registry } from 'prom-client'

export async function exposition(registry: Registry): Promise<string> {
  let out = ''
  for (const metric of await registry.getMetricsAsJSON()) {
    out += `# HELP ${metric.name} ${escapeHelp(metric.help)}\n# TYPE ${metric.name} ${metric.type}\n`
    for (const { metricName, labels, value } of metric.values as {
      metricName?: string
      labels: Record<string, string | number>
      value: number
    }[]) {
      out += metricName ?? metric.name
      let first = true
      for (const name in labels) {
        const v = labels[name]
        if (v === undefined) continue
        out += `${first ? '{' : ','}${name}="${escapeLabel(String(v))}"`
        first = false
      }
      out += `${first ? '' : '}'} ${sampleValue(value)}\n`
    }
  }
  return out
}

const NEEDS_ESCAPE = /[\\"\n]/

function escapeLabel(v: string): string {
  return NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

function sampleValue(v: number): string {
  if (v === Number.POSITIVE_INFINITY) return '+Inf'
  if (v === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(v) // NaN is "NaN", as the format spells it
}
