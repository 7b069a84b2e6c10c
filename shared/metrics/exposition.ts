// Prometheus' text format (version 0.0.4) of a prom-client registry, written here rather than by
// registry.metrics(): that one formats every line through several arrays, an escaping regex per label and a
// template per part, and its histograms make an object, with its own labels object, for every bucket of every
// series. A scrape of an idle process made about ten times its text's size in garbage that way (bench:metrics),
// whose collection a Prometheus scraping every 15 s pays at its scrapes. Here counters, gauges and histograms are
// written straight from the values prom-client keeps (its `hashMap`: per series the labels and the value, or the
// per-bucket counts, sum and count), after each metric's collect, as prom-client's own get() does; any other kind
// goes through get(). The lines are the same as prom-client's (a test compares them), so an upgrade of prom-client
// that changes what it keeps fails that test rather than the scrape.
import type { Registry } from 'prom-client'

type Labels = Record<string, string | number | undefined>

/** What prom-client 15 keeps per metric (lib/counter.js, gauge.js, histogram.js). */
interface Kept {
  name: string
  help: string
  type: string
  collect?: () => unknown
  hashMap: Record<string, { labels: Labels; value: number } | HistogramSeries>
  upperBounds?: number[]
}

interface HistogramSeries {
  labels: Labels
  bucketValues: Record<number, number>
  sum: number
  count: number
}

export async function exposition(registry: Registry): Promise<string> {
  let out = ''
  for (const metric of registry.getMetricsAsArray()) {
    const kept = metric as unknown as Kept
    const { name, type } = kept
    out += header(kept)
    if (type === 'histogram') {
      await collected(kept)
      for (const hash in kept.hashMap) {
        const series = kept.hashMap[hash] as HistogramSeries
        const last = written.get(series)
        // A series' count moves with every observation, so the same count and sum are the same lines.
        if (last?.value === series.count && last.sum === series.sum) out += last.text
        else {
          const text = histogramLines(name, kept.upperBounds!, series)
          written.set(series, { value: series.count, sum: series.sum, text })
          out += text
        }
      }
    } else if (type === 'counter' || type === 'gauge') {
      await collected(kept)
      for (const hash in kept.hashMap) {
        const series = kept.hashMap[hash] as { labels: Labels; value: number }
        const last = written.get(series)
        if (last?.value === series.value) out += last.text
        else {
          const own = labelText(series.labels, '{')
          const text = `${name}${own}${own ? '}' : ''} ${sampleValue(series.value)}\n`
          written.set(series, { value: series.value, sum: 0, text })
          out += text
        }
      }
    } else out += await fromGet(metric as unknown as { get(): Promise<unknown> })
  }
  return out
}

/**
 * The lines last written for a series (prom-client keeps the same object for a series as long as it exists, and
 * changes its value in place), with what they were written from (a counter's or gauge's value; a histogram's count
 * and sum): an idle process's next scrape reuses them instead of writing the same text again (most of a scrape's
 * garbage otherwise).
 */
const written = new WeakMap<object, { value: number; sum: number; text: string }>()
const headers = new WeakMap<Kept, string>()

function header(kept: Kept): string {
  let text = headers.get(kept)
  if (text === undefined) headers.set(kept, (text = `# HELP ${kept.name} ${escapeHelp(kept.help)}\n# TYPE ${kept.name} ${kept.type}\n`))
  return text
}

function histogramLines(name: string, bounds: number[], { labels, bucketValues, sum, count }: HistogramSeries): string {
  const rest = labelText(labels, ',')
  let out = ''
  let acc = 0
  for (const bound of bounds) {
    acc += bucketValues[bound]
    out += `${name}_bucket{le="${sampleValue(bound)}"${rest}} ${sampleValue(acc)}\n`
  }
  out += `${name}_bucket{le="+Inf"${rest}} ${sampleValue(count)}\n`
  const own = labelText(labels, '{')
  const close = own ? '}' : ''
  return `${out}${name}_sum${own}${close} ${sampleValue(sum)}\n${name}_count${own}${close} ${sampleValue(count)}\n`
}

/** Runs a metric's collect, as prom-client's get() does before reading the values. */
async function collected(kept: Kept): Promise<void> {
  const done = kept.collect?.()
  if (done instanceof Promise) await done
}

/** `a="x",b="y"` with `lead` before the first label, or '' when there is none. */
function labelText(labels: Labels, lead: string): string {
  let text = ''
  for (const name in labels) {
    const v = labels[name]
    if (v === undefined) continue
    text += `${text ? ',' : lead}${name}="${escapeLabel(String(v))}"`
  }
  return text
}

/** A kind written only through prom-client's get() (a summary: this service has none). */
async function fromGet(metric: { get(): Promise<unknown> }): Promise<string> {
  const { name, values } = (await metric.get()) as {
    name: string
    values: { metricName?: string; labels: Labels; value: number }[]
  }
  let out = ''
  for (const { metricName, labels, value } of values) {
    const own = labelText(labels, '{')
    out += `${metricName ?? name}${own}${own ? '}' : ''} ${sampleValue(value)}\n`
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
