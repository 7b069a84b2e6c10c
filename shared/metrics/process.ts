// The process's own metrics (memory, CPU, heap, event-loop lag, GC, file descriptors) under the names of
// prom-client's default collectors, so dashboards written for those read these. Not collectDefaultMetrics
// itself: with a Prometheus scraping every 15 s, each scrape finds the process idle and pays cold for what
// it reads, and its 23 defaults cost about 3 ms of CPU per scrape that way (measured in one process, docs/operations.md),
// most of it in figures nobody charts: the loop delay's standard deviation and percentiles it computes
// over its whole histogram, heap figures per V8 space, /proc/self/status read and parsed for three values.
// These are read with one cheap call each.
import { readdirSync } from 'node:fs'
import { constants, monitorEventLoopDelay, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry]
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
    registers,
    collect() {
      const { user, system } = process.cpuUsage()
      this.reset()
      this.inc((user + system) / 1e6)
    },
  })
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage.rss())
    },
  })
  new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', registers }).set(
    Math.round(Date.now() / 1000 - process.uptime()),
  )
  // Linux only (as prom-client's): a leak of sockets or files shows here first.
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers,
    collect() {
      try {
        this.set(readdirSync('/proc/self/fd').length - 1) // less the descriptor readdir itself opened
      } catch {}
    },
  })
  // All three read by the first collected (registration order), so all show this scrape's. The external memory
  // (Buffers and other memory outside the heap that V8 is told of) says whether a resident size that grows is the
  // heap's or not.
  new Gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'Process heap size used from Node.js in bytes.',
    registers,
    collect() {
      const heap = getHeapStatistics()
      this.set(heap.used_heap_size)
      heapTotal.set(heap.total_heap_size)
      external.set(heap.external_memory)
    },
  })
  const heapTotal = new Gauge({ name: 'nodejs_heap_size_total_bytes', help: 'Process heap size from Node.js in bytes.', registers })
  const external = new Gauge({ name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.', registers })

  // The loop's delay since the last scrape, sampled every 10 ms (prom-client's default resolution).
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  // Read and reset by the first of the two to be collected (registration order: the p99), so both show this
  // scrape's delays.
  new Gauge({
    name: 'nodejs_eventloop_lag_p99_seconds',
    help: 'The 99th percentile of the event loop delay since the last scrape, in seconds.',
    registers,
    collect() {
      this.set(delay.percentile(99) / 1e9)
      lagMax.set(delay.max / 1e9)
      delay.reset()
    },
  })
  const lagMax = new Gauge({
    name: 'nodejs_eventloop_lag_max_seconds',
    help: 'The largest event loop delay since the last scrape, in seconds.',
    registers,
  })
  // What a callback queued now waits (prom-client's nodejs_eventloop_lag_seconds: the value is measured at the
  // scrape and shown at the next one).
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of event loop in seconds, measured at the previous scrape.',
    registers,
    collect() {
      const start = process.hrtime.bigint()
      setImmediate(() => this.set(Number(process.hrtime.bigint() - start) / 1e9))
    },
  })

  const kinds: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  }
  const gc = new Histogram({
    name: 'nodejs_gc_duration_seconds',
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.01, 0.1, 1],
    registers,
  })
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind: number } }
      gc.observe({ kind: kinds[detail?.kind ?? -1] ?? 'other' }, entry.duration / 1000)
    }
  }).observe({ entryTypes: ['gc'] })

  new Gauge({ name: 'nodejs_version_info', help: 'Node.js version info.', labelNames: ['version'] as const, registers }).set(
    { version: process.version },
    1,
  )
}
