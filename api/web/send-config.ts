// Copy-paste set-ups for the ingest protocols people already run (docs/decisions.md §21), shown on the Send data
// page with the key filled in and in the README. Plain TypeScript: the page bundles it and tests render it.

import { planOf, type PlanName } from '../../shared/plans.js'

/** The fields of Telegraf's cpu input (totalcpu, percpu off): each one a gauge. */
const CPU_FIELDS = 10
/** The cpu fields kept where the plan tracks few stats: what a dashboard of one host shows first. */
const CPU_FEW = ['usage_idle', 'usage_user', 'usage_system']
const MEM_FIELDS = ['used_percent', 'available']

/**
 * Telegraf's InfluxDB v2 output, pointed at the service: only the URL and the token change. The inputs fit the
 * plan the page is shown to: cpu and mem as they come make 12 gauges a host, more than the
 * free plan's 10 stats, and a write that would pass the plan's stat count is refused whole (Telegraf then
 * retries it forever); there the cpu input keeps three fields.
 */
export function telegrafConfig(base: string, key: string, plan: PlanName = 'free'): string {
  const tracked = planOf(plan).trackedStats
  const all = CPU_FIELDS + MEM_FIELDS.length
  const few = all > tracked
  const cpu = few
    ? `[[inputs.cpu]]
  percpu = false
  totalcpu = true
  # Your plan tracks ${tracked} series. All ${CPU_FIELDS} cpu fields and 2 of mem would be ${all} a host, and a write
  # that would pass the limit is refused whole: keep three (each host adds ${CPU_FEW.length + MEM_FIELDS.length} series).
  fieldinclude = [${CPU_FEW.map((f) => `"${f}"`).join(', ')}]`
    : `[[inputs.cpu]]
  percpu = false
  totalcpu = true   # ${all} stats a host with mem below; your plan tracks ${tracked.toLocaleString('en-US')}`
  return `# telegraf.conf: every field becomes the gauge <measurement>.<field>, its tags the series' tags (cpu.usage_idle {cpu: cpu-total, host: web1})
[[outputs.influxdb_v2]]
  urls = ["${base}"]
  token = "${key}"
  organization = "any"   # ignored: the key names the account
  bucket = "any"         # ignored
  content_encoding = "gzip"

# Or Telegraf's InfluxDB 1.x output:
# [[outputs.influxdb]]
#   urls = ["${base}"]
#   database = "any"
#   username = "any"
#   password = "${key}"

${cpu}
[[inputs.mem]]
  fieldinclude = [${MEM_FIELDS.map((f) => `"${f}"`).join(', ')}]   # numbers only: a string or boolean field refuses the whole write`
}

/** A StatsD client (hot-shots for Node), with the key as the metric prefix, and the same by hand. */
export function statsdExample(host: string, port: number | undefined, key: string): string {
  if (port === undefined) return '# StatsD is not enabled on this deployment (STATSD_PORT is unset).'
  return `// npm install hot-shots   (UDP by default; protocol: 'tcp' for TCP on the same port)
import StatsD from 'hot-shots'
const stats = new StatsD({ host: '${host}', port: ${port}, prefix: '${key}.' })
stats.increment('signups')                        // counter "signups"
stats.increment('requests', 1, 0.1)               // sampled at 10 %: counted as 10
stats.gauge('queue.depth', 42, ['queue:mail'])    // gauge "queue.depth", tag queue: mail
stats.timing('checkout.latency', 120)             // ms, h and d are gauge observations

# From a shell (UDP):
echo "${key}.signups:1|c" | nc -u -w0 ${host} ${port}`
}

/**
 * Prometheus' remote_write block: every scraped series arrives as a gauge. The advice to keep only some series
 * names the plan's own stat count (it said "the free plan tracks 10 stats" to paid accounts too).
 */
export function prometheusConfig(base: string, key: string, plan: PlanName = 'free'): string {
  const tracked = planOf(plan).trackedStats
  const head = `# prometheus.yml: each series becomes the gauge <__name__>, its labels the series' tags
remote_write:
  - url: ${base}/api/v1/prom/write
    authorization:
      credentials: ${key}`
  // A node exporter alone has several hundred series: a plan tracking fewer needs the filter, one tracking more does not.
  if (tracked >= NODE_EXPORTER_SERIES) return head
  return `${head}
    # Your plan (${plan}) tracks ${tracked.toLocaleString('en-US')} stats, and a node exporter alone has hundreds of series: keep only the ones you want, e.g.
    # write_relabel_configs:
    #   - source_labels: [__name__]
    #     regex: "node_load1|node_memory_MemAvailable_bytes"
    #     action: keep`
}

/** About how many series one node exporter sends (several hundred on a typical Linux host). */
const NODE_EXPORTER_SERIES = 1_000
