// Day blocks (sql/0027_point_blocks.sql) on the Node side: decoded for the export, encoded by the
// persist worker for writes that store a block instead of a row per point (sql/0032). Both follow
// point_block_encode and point_block_decode exactly; test/shared/blocks.test.ts holds them to it.

/** A point as the export reads it. */
export interface Row {
  /**
   * The exact time in microseconds since the epoch (int8, as text): the key of the export's next page, and its
   * whole-second `t`. A timestamptz parameter goes through a JS Date, which keeps milliseconds only: a page
   * ending on sub-millisecond times would start over for ever.
   */
  us: string
  value: number
}

/**
 * Points as two columns, for readers of many (the export): times in microseconds since the epoch, whole numbers
 * that a double holds exactly until the year 2255, and values. A row object per point, its time as text, was a
 * quarter of a large export's CPU in garbage collection alone.
 */
export interface Points {
  us: Float64Array
  values: Float64Array
  length: number
}

/** Columns of the given length. */
export function points(length: number): Points {
  return { us: new Float64Array(length), values: new Float64Array(length), length }
}

/** Points i to j (j excluded) without a copy. */
export function slicePoints(p: Points, i: number, j: number): Points {
  return { us: p.us.subarray(i, j), values: p.values.subarray(i, j), length: j - i }
}

/** Rows (time as text) in columns. */
export function pointsOfRows(rows: readonly Row[]): Points {
  const p = points(rows.length)
  for (let i = 0; i < rows.length; i++) {
    p.us[i] = Number(rows[i].us)
    p.values[i] = rows[i].value
  }
  return p
}

/** Columns as rows (time as text). */
export function rowsOfPoints(p: Points): Row[] {
  const rows: Row[] = new Array(p.length)
  for (let i = 0; i < p.length; i++) rows[i] = { us: String(p.us[i]), value: p.values[i] }
  return rows
}

/** One day block's columns as postgres.js gives them; int8 arrays come as text. */
export interface BlockColumns {
  day: Date
  dts: number[]
  scale: number | null
  ivals: Array<string | number | bigint> | null
  fvals: number[] | null
}

/**
 * A day block's points in time order, in [fromUs, toUs): point_block_decode done here, two running
 * sums, because decoding in SQL cost the export half its speed (a window function per point, and a
 * day of many pages decoded once per page). The integer sum runs in BigInt: scaled values may pass
 * 2^53, and the division by the scale gives back the exact double the writer sent, as in SQL.
 */
export function decodeBlockPoints(b: BlockColumns, fromUs = -Infinity, toUs = Infinity): Points {
  const dayUs = b.day.getTime() * 1000
  const out = points(b.dts.length)
  let n = 0
  let seconds = 0
  // The running sum in plain numbers while it is exact (every delta and every partial sum a safe
  // integer: two-decimal gauges and counters, nearly every block), in BigInt from the first step that is not.
  let scaled = 0
  let big: bigint | null = null
  for (let i = 0; i < b.dts.length; i++) {
    seconds += b.dts[i]
    let value: number
    if (b.scale === null) value = b.fvals![i]
    else {
      const d = b.ivals![i]
      if (big === null) {
        const x = Number(d)
        if (Number.isSafeInteger(x) && Number.isSafeInteger(scaled + x)) scaled += x
        else big = BigInt(scaled) + BigInt(d)
      } else big += BigInt(d)
      value = (big === null ? scaled : Number(big)) / b.scale
    }
    const us = dayUs + seconds * 1_000_000
    if (us < fromUs || us >= toUs) continue
    out.us[n] = us
    out.values[n++] = value
  }
  return slicePoints(out, 0, n)
}

/** decodeBlockPoints as rows. */
export function decodeBlock(b: BlockColumns, fromUs = -Infinity, toUs = Infinity): Row[] {
  return rowsOfPoints(decodeBlockPoints(b, fromUs, toUs))
}

/**
 * Runs of points, each in time order, as one (equal times keep the order of the runs). Runs that follow one another
 * (each starting at or after the end of the one before: a backfill's write blocks, days laid end to end) are
 * joined as they are; others are merged in pairs, level by level, so k runs cost n log k rather than n k (a day of
 * 28 write blocks merged into one growing run was half of a 180-day export's CPU).
 */
export function mergePoints(runs: Points[]): Points {
  let level = runs.filter((r) => r.length)
  if (level.length <= 1) return level[0] ?? points(0)
  const inOrder = level.every((r, i) => i === 0 || level[i - 1].us[level[i - 1].length - 1] <= r.us[0])
  if (inOrder) {
    const out = points(level.reduce((n, r) => n + r.length, 0))
    let at = 0
    for (const r of level) {
      out.us.set(r.us, at)
      out.values.set(r.values, at)
      at += r.length
    }
    return out
  }
  while (level.length > 1) {
    const next: Points[] = []
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? mergeTwoPoints(level[i], level[i + 1]) : level[i])
    level = next
  }
  return level[0]
}

/** Two runs of columns in time order as one; on equal times `a`'s points come first. */
function mergeTwoPoints(a: Points, b: Points): Points {
  const out = points(a.length + b.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < a.length && j < b.length) {
    if (a.us[i] <= b.us[j]) {
      out.us[k] = a.us[i]
      out.values[k++] = a.values[i++]
    } else {
      out.us[k] = b.us[j]
      out.values[k++] = b.values[j++]
    }
  }
  out.us.set(a.us.subarray(i), k)
  out.values.set(a.values.subarray(i), k)
  k += a.length - i
  out.us.set(b.us.subarray(j), k)
  out.values.set(b.values.subarray(j), k)
  return out
}

/** A block as the persist statement sends it: times in whole seconds since the epoch. */
export interface EncodedBlock {
  /** The UTC midnight the block's day starts at. */
  day: number
  n: number
  first: number
  last: number
  dts: number[]
  scale: number | null
  /** Deltas of round(value * scale): plain numbers while every scaled value is within 2^52, else BigInt. */
  ivals: Array<number | bigint> | null
  fvals: number[] | null
}

const MAX_SCALE_EXPONENT = 6
/** Beyond this a value is not scaled (point_block_encode's `abs(v) < 1e12`). */
const MAX_SCALED_MAGNITUDE = 1e12

/**
 * point_block_encode in the worker: the points (any order, whole seconds inside the day starting at `day`)
 * sorted by time, keeping the given order among equal times, as the SQL's `order by t, o` does. The scale is
 * the smallest 10^k (k up to 6) through which every value round-trips exactly, rounded as SQL's round() of a
 * double rounds (ties to even): a product on a tie can round-trip, 4434608397.43 * 10^6 = 4434608397430000.5 to
 * ...000 but not to Math.round's ...001, and the two encoders then chose different scales.
 */
export function encodeBlock(day: number, ts: number[], values: number[]): EncodedBlock {
  const order = ts.map((_, i) => i).sort((a, b) => ts[a] - ts[b] || a - b)
  const n = order.length
  const dts = new Array<number>(n)
  let prev = day
  for (let i = 0; i < n; i++) {
    const t = ts[order[i]]
    dts[i] = t - prev
    prev = t
  }
  const sorted = order.map((i) => values[i])
  const scale = scaleOf(sorted)
  let ivals: Array<number | bigint> | null = null
  if (scale !== null) {
    const scaled = sorted.map((v) => roundHalfEven(v * scale))
    const safe = scaled.every((x) => Math.abs(x) <= 2 ** 52)
    ivals = safe
      ? scaled.map((x, i) => x - (i ? scaled[i - 1] : 0) || 0)
      : scaled.map((x, i) => BigInt(x) - (i ? BigInt(scaled[i - 1]) : 0n))
  }
  return { day, n, first: ts[order[0]], last: ts[order[n - 1]], dts, scale, ivals, fvals: scale === null ? sorted : null }
}

/** PostgreSQL's round() of a float8: to the nearest integer, ties to the even one. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x)
  const d = x - f
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f
}

function scaleOf(values: number[]): number | null {
  if (!values.every((v) => Math.abs(v) < MAX_SCALED_MAGNITUDE)) return null
  for (let k = 0; k <= MAX_SCALE_EXPONENT; k++) {
    const s = 10 ** k
    if (values.every((v) => roundHalfEven(v * s) / s === v)) return s
  }
  return null
}
