// Look-ups in flight by key, so that callers asking for the same thing
// meanwhile share one answer instead of each asking the database (no stampede
// when a cache entry expires or a new stat gets its first writers at once).
export class InFlight<K, V> {
  private readonly pending = new Map<K, Promise<V>>()

  get(key: K): Promise<V> | undefined {
    return this.pending.get(key)
  }

  /** Starts `fn` unless a call for `key` is in flight, whose promise is returned instead. */
  run(key: K, fn: () => Promise<V>): Promise<V> {
    return this.pending.get(key) ?? this.track(key, fn())
  }

  /** Shares `promise` as the answer for `key` until it settles or is forgotten. */
  track(key: K, promise: Promise<V>): Promise<V> {
    this.pending.set(key, promise)
    void promise
      .catch(() => {})
      .finally(() => {
        if (this.pending.get(key) === promise) this.pending.delete(key)
      })
    return promise
  }

  forget(key: K): void {
    this.pending.delete(key)
  }
}
