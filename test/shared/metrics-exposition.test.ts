// /metrics' text (shared/metrics/exposition.ts) and the process metrics (shared/metrics/process.ts): the text is
// line for line what prom-client writes, and each process figure moves with what it measures.
import test from 'ava'
import { openSync, closeSync } from 'node:fs'
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client'
import { exposition } from '../../shared/metrics/exposition.js'
import { registerProcessMetrics } from '../../shared/metrics/process.js'

const lines = (text: string) => text.split('\n').filter((l) => l !== '')

function sample(text: string, series: string): number {
  const line = lines(text).find((l) => l.startsWith(`${series} `))
  if (!line) throw new Error(`no sample ${series} in:\n${text}`)
  return Number(line.slice(series.length + 1))
}

test('the text is line for line what prom-client writes: escapes, histograms, special values, metrics without samples', async (t) => {
  const registry = new Registry()
  const registers = [registry]
  const counter = new Counter({
    name: 'x_requests_total',
    help: 'Requests.\nBy "route" \\ code.',
    labelNames: ['route', 'code'],
    registers,
  })
  counter.inc({ route: '/a"b\\c\nd', code: '200' }, 3)
  counter.inc({ route: '/plain', code: '500' })
  const histogram = new Histogram({ name: 'x_seconds', help: 'Time.', labelNames: ['queue'], buckets: [0.001, 0.5, 10], registers })
  histogram.observe({ queue: 'ingest' }, 0.2)
  histogram.observe({ queue: 'ingest' }, 20)
  histogram.observe({ queue: 'alerts' }, 0.0001)
  const gauge = new Gauge({ name: 'x_value', help: 'Values.', labelNames: ['v'], registers })
  gauge.set({ v: 'nan' }, Number.NaN)
  gauge.set({ v: 'inf' }, Number.POSITIVE_INFINITY)
  gauge.set({ v: 'ninf' }, Number.NEGATIVE_INFINITY)
  gauge.set({ v: 'small' }, 1e-9)
  new Gauge({ name: 'x_unset', help: 'Never set.', labelNames: ['a'], registers })
  new Gauge({ name: 'x_plain', help: 'No labels.', registers }).set(42)
  // Read through prom-client's get() (the service has no summary; any other kind goes that way).
  const summary = new Summary({ name: 'x_summary_seconds', help: 'A summary.', labelNames: ['q'], percentiles: [0.5, 0.9], registers })
  summary.observe({ q: 'a' }, 1)
  summary.observe({ q: 'a' }, 3)
  new Histogram({ name: 'x_plain_seconds', help: 'A histogram without labels.', buckets: [1], registers }).observe(0.5)

  const ours = await exposition(registry)
  // prom-client writes NaN as "Nan"; the format's spelling is "NaN" (Prometheus reads either).
  t.deepEqual(lines(ours), lines((await registry.metrics()).replace(/ Nan$/m, ' NaN')))
  t.true(ours.includes('x_requests_total{route="/a\\"b\\\\c\\nd",code="200"} 3\n'))
  t.true(ours.includes('x_seconds_bucket{le="+Inf",queue="ingest"} 2\n'))
  t.true(ours.includes('x_value{v="inf"} +Inf\n'))
  t.true(ours.includes('x_plain 42\n'))
  t.true(ours.includes('x_summary_seconds{quantile="0.9",q="a"} 3\n'))
  t.true(ours.endsWith('x_plain_seconds_sum 0.5\nx_plain_seconds_count 1\n'))

  // The next scrape reuses the lines of series that did not change and writes the others anew.
  counter.inc({ route: '/plain', code: '500' }, 2)
  histogram.observe({ queue: 'alerts' }, 0.3)
  gauge.set({ v: 'small' }, 2e-9)
  const next = await exposition(registry)
  t.deepEqual(lines(next), lines((await registry.metrics()).replace(/ Nan$/m, ' NaN')))
  t.true(next.includes('x_requests_total{route="/plain",code="500"} 3\n'))
  t.true(next.includes('x_seconds_bucket{le="0.5",queue="alerts"} 2\n'))
  t.true(next.includes('x_seconds_sum{queue="alerts"} 0.3001\n'))
  t.true(next.includes('x_value{v="small"} 2e-9\n'))
  t.true(next.includes('x_seconds_bucket{le="+Inf",queue="ingest"} 2\n'))
})

test('the process metrics move with what they measure: CPU, memory, descriptors, loop delay, collections', async (t) => {
  const registry = new Registry()
  registerProcessMetrics(registry)
  // The loop's monitor counts delays from its first tick on (one every 10 ms).
  await new Promise((resolve) => setTimeout(resolve, 100))
  const before = await exposition(registry)
  // ...and again after each scrape's reset (as prom-client's, which resets it the same way).
  await new Promise((resolve) => setTimeout(resolve, 30))

  // CPU: 50 ms of work.
  const until = performance.now() + 50
  while (performance.now() < until);
  // Descriptors: two more open.
  const fds = [openSync('/dev/null', 'r'), openSync('/dev/null', 'r')]
  // Collections: short-lived garbage.
  for (let i = 0; i < 200; i++) new Array(10_000).fill(i)
  // External memory: a 32 MB Buffer held across the scrape.
  const held = Buffer.alloc(32 * 2 ** 20, 1)
  // Loop delay: the loop blocked for 80 ms, then let it run so the monitor sees it.
  const blocked = performance.now() + 80
  while (performance.now() < blocked);
  await new Promise((resolve) => setTimeout(resolve, 50))
  const after = await exposition(registry)
  fds.forEach(closeSync)

  t.true(sample(after, 'process_cpu_seconds_total') - sample(before, 'process_cpu_seconds_total') >= 0.1)
  const rss = sample(after, 'process_resident_memory_bytes')
  t.true(rss > 0.5 * process.memoryUsage.rss() && rss < 2 * process.memoryUsage.rss(), `${rss}`)
  t.is(sample(after, 'process_open_fds') - sample(before, 'process_open_fds'), 2)
  t.true(sample(after, 'nodejs_eventloop_lag_max_seconds') >= 0.07)
  // This scrape's, not the one before's (a handful of 10 ms samples: the block is their 99th percentile).
  t.true(sample(after, 'nodejs_eventloop_lag_p99_seconds') >= 0.07)
  // Every figure is this scrape's, from the first scrape on (none shows what a collect of another set the time before).
  t.true(sample(before, 'nodejs_heap_size_used_bytes') > 0)
  t.true(sample(before, 'nodejs_eventloop_lag_p99_seconds') > 0)
  t.true(sample(after, 'nodejs_heap_size_used_bytes') <= sample(after, 'nodejs_heap_size_total_bytes'))
  // The Buffer's 32 MB, give or take what other Buffers allocated or freed meanwhile (a few kB).
  const external = sample(after, 'nodejs_external_memory_bytes') - sample(before, 'nodejs_external_memory_bytes')
  t.true(external > held.length - 2 ** 20 && external < held.length + 2 ** 20, `${external}`)
  t.true(sample(after, 'nodejs_gc_duration_seconds_count{kind="minor"}') >= 1)
  t.true(Math.abs(sample(after, 'process_start_time_seconds') - (Date.now() / 1000 - process.uptime())) <= 1)
  t.is(sample(after, `nodejs_version_info{version="${process.version}"}`), 1)
  // What a callback waited at the scrape before: a loop that runs freely answers within a few ms.
  t.true(sample(after, 'nodejs_eventloop_lag_seconds') < 0.05)
})
