// Memory for a query's samples, reused from one query to the next. A week of five-minute buckets is two typed arrays
// of 2,016 numbers a series, a zone read's two of a step's count: allocated one by one, each took about 4 µs (every
// typed array past 64 bytes has a backing store of its own, outside V8's heap), 200 of them a query over 100 series,
// and their external memory brought collections forward. A query takes views of larger chunks instead and gives the
// chunks back once its answer is built: the answer copies every number it keeps (engine.ts, rangeQuery and
// instantQuery), so no view of a chunk outlives the query that took it.

/** Numbers a chunk holds (512 KiB): a week of five-minute samples of 16 series. */
const CHUNK = 1 << 16
/** Chunks kept between queries (8 MiB): the rest go to the collector. */
const SPARE = 16
const spare: Float64Array[] = []

export class Arena {
  private readonly chunks: Float64Array[] = []
  private used = CHUNK

  /** n numbers, not zeroed (the caller writes each before reading it), valid until release(). */
  take(n: number): Float64Array {
    if (n > CHUNK) return new Float64Array(n)
    if (this.used + n > CHUNK) {
      this.chunks.push(spare.pop() ?? new Float64Array(CHUNK))
      this.used = 0
    }
    this.used += n
    return this.chunks[this.chunks.length - 1].subarray(this.used - n, this.used)
  }

  /** Gives the chunks back for other queries: nothing this arena handed out may be read or written after. */
  release(): void {
    for (const c of this.chunks.splice(0)) if (spare.length < SPARE) spare.push(c)
    this.used = CHUNK
  }
}
