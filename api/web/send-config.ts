// Copy-paste set-ups for the ingest protocols people already run (decisions.md 21), shown on the Send data
// page with the key filled in and in the README. Plain TypeScript: the page bundles it and tests render it.

/** Telegraf's InfluxDB v2 output, pointed at the service: only the URL and the token change. */
export function telegrafConfig(base: string, key: string): string {
  return `# telegraf.conf: every field becomes the gauge <measurement>.<field>, tags appended (cpu.usage_idle.cpu_cpu-total.host_web1)
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

[[inputs.cpu]]
  percpu = false
  totalcpu = true
[[inputs.mem]]
  fieldinclude = ["used_percent", "available"]   # numbers only: a string or boolean field refuses the whole write`
}

/** A StatsD client (hot-shots for Node), with the key as the metric prefix, and the same by hand. */
export function statsdExample(host: string, port: number | undefined, key: string): string {
  if (port === undefined) return '# StatsD is not enabled on this deployment (STATSD_PORT is unset).'
  return `// npm install hot-shots   (UDP by default; protocol: 'tcp' for TCP on the same port)
import StatsD from 'hot-shots'
const stats = new StatsD({ host: '${host}', port: ${port}, prefix: '${key}.' })
stats.increment('signups')                        // counter "signups"
stats.increment('requests', 1, 0.1)               // sampled at 10 %: counted as 10
stats.gauge('queue.depth', 42, ['queue:mail'])    // gauge "queue.depth.queue_mail"
stats.timing('checkout.latency', 120)             // ms, h and d are gauge observations

# From a shell (UDP):
echo "${key}.signups:1|c" | nc -u -w0 ${host} ${port}`
}

/** Prometheus' remote_write block: every scraped series arrives as a gauge. */
export function prometheusConfig(base: string, key: string): string {
  return `# prometheus.yml: each series becomes the gauge <__name__>.<label>_<value>... (labels sorted by name)
remote_write:
  - url: ${base}/api/v1/prom/write
    authorization:
      credentials: ${key}
    # The free plan tracks 10 stats: keep only the series you want, e.g.
    # write_relabel_configs:
    #   - source_labels: [__name__]
    #     regex: "node_load1|node_memory_MemAvailable_bytes"
    #     action: keep`
}
