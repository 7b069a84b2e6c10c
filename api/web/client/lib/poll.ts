// Adaptive polling (after Healthchecks.io): fast while the tab is visible and
// someone is using it, slower when idle, rare when hidden; a tab coming back
// into view refreshes at once. No websocket needed.
import { useEffect, useRef } from 'preact/hooks'

const ACTIVE_MS = 2_000
const IDLE_MS = 15_000
const HIDDEN_MS = 60_000
const IDLE_AFTER_MS = 60_000

let lastActivity = Date.now()
for (const ev of ['mousemove', 'keydown', 'pointerdown', 'scroll', 'focus']) {
  addEventListener(
    ev,
    () => {
      lastActivity = Date.now()
    },
    { passive: true, capture: true },
  )
}

export function pollDelay(): number {
  if (document.visibilityState === 'hidden') return HIDDEN_MS
  return Date.now() - lastActivity < IDLE_AFTER_MS ? ACTIVE_MS : IDLE_MS
}

/**
 * Calls `tick` now and then again and again at the adaptive delay; `deps` restart it. A tick still in flight when
 * they do was asked for what the page showed before (the range, the filter before the one just applied): its
 * argument then answers true, and it must not show what it read, which would otherwise replace the newer answer
 * until the next tick.
 */
export function usePoll(tick: (stale: () => boolean) => Promise<unknown>, deps: unknown[]): void {
  const latest = useRef(tick)
  latest.current = tick
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined
    let stopped = false
    let running = false
    const run = async () => {
      if (running) return // a tab coming back while a tick is in flight must not start a second loop
      running = true
      clearTimeout(timer)
      try {
        await latest.current(() => stopped)
      } finally {
        running = false
        if (!stopped) timer = setTimeout(run, pollDelay())
      }
    }
    const onVisible = () => {
      if (document.visibilityState === 'visible') void run()
    }
    document.addEventListener('visibilitychange', onVisible)
    void run()
    return () => {
      stopped = true
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, deps)
}
