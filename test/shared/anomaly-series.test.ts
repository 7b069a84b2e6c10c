// A stat's series as the sweep reads them (docs/decisions.md §D-W): the whole of several series, and which series
// carry an incident.
import test from 'ava'
import { HOUR } from '../../shared/anomalies/detector.js'
import { carriedWords, carriersOf, fold, type SeriesHours } from '../../shared/anomalies/whole.js'

const T0 = 1_700_000_000 - (1_700_000_000 % HOUR)
const part = (tags: Record<string, string> | null, values: Array<number | null>, counts?: number[]): SeriesHours => ({
  id: JSON.stringify(tags),
  tags,
  values,
  counts: counts ?? values.map((v) => (v === null ? 0 : 1)),
})

test('the whole of several series: counters summed, gauges weighted by observations, unknown only where every series is', (t) => {
  const c = fold('counter', [part(null, [null, 0, 0]), part({ host: 'a' }, [null, 3, 4]), part({ host: 'b' }, [null, null, 6])], T0)
  t.deepEqual(c.values, [null, 3, 10])
  const g = fold('gauge', [part({ host: 'a' }, [10, null, 20], [1, 0, 3]), part({ host: 'b' }, [30, 40, null], [3, 2, 0])], T0)
  t.deepEqual(g.values, [(10 * 1 + 30 * 3) / 4, 40, 20])
  t.deepEqual(g.counts, [4, 2, 3])
})

test('the series that carry an incident: the one that moved, not the one that is large; a gauge by its share of observations', (t) => {
  // web1 about 40, web2 about 400 every hour for a day; in hour 24 web1 jumps to 900, web2 stays.
  const n = 25
  const web1 = Array.from({ length: n }, (_, i) => (i === 24 ? 900 : 40 + (i % 3)))
  const web2 = Array.from({ length: n }, (_, i) => 400 + (i % 5))
  const parts = [part(null, new Array(n).fill(0)), part({ host: 'web1' }, web1), part({ host: 'web2' }, web2)]
  const whole = fold('counter', parts, T0)
  const carriers = carriersOf('counter', whole, parts, { startedAt: T0 + 24 * HOUR, endedAt: T0 + 25 * HOUR, direction: 'spike' })
  t.is(carriers[0].tags?.host, 'web1')
  t.true(carriers[0].share > 0.95)
  t.is(carriedWords(carriers), `mostly host:web1 (${Math.round(carriers[0].share * 100)} %)`)
  // A dip carried by two hosts equally: both named, together.
  const a = Array.from({ length: n }, (_, i) => (i === 24 ? 0 : 100))
  const two = [part({ host: 'a' }, a), part({ host: 'b' }, a), part({ host: 'c' }, new Array(n).fill(100))]
  const dip = carriersOf('counter', fold('counter', two, T0), two, { startedAt: T0 + 24 * HOUR, endedAt: null, direction: 'dip' })
  t.deepEqual(
    dip.map((c) => [c.tags?.host, c.share]),
    [
      ['a', 0.5],
      ['b', 0.5],
    ],
  )
  t.is(carriedWords(dip), 'mostly host:a and host:b (100 % together)')
  // A gauge: a host with few readings that moved far carries less than its move, weighted by its share of the hour.
  const g = [
    part(
      { host: 'big' },
      Array.from({ length: n }, (_, i) => (i === 24 ? 130 : 100)),
      new Array(n).fill(9),
    ),
    part(
      { host: 'small' },
      Array.from({ length: n }, (_, i) => (i === 24 ? 200 : 100)),
      new Array(n).fill(1),
    ),
  ]
  const gc = carriersOf('gauge', fold('gauge', g, T0), g, { startedAt: T0 + 24 * HOUR, endedAt: T0 + 25 * HOUR, direction: 'spike' })
  // big: 0.9 x 30 = 27; small: 0.1 x 100 = 10.
  t.deepEqual(
    gc.map((c) => [c.tags?.host, c.share]),
    [
      ['big', 0.73],
      ['small', 0.27],
    ],
  )
  t.deepEqual(carriersOf('counter', whole, parts.slice(0, 1), { startedAt: T0 + 24 * HOUR, endedAt: null, direction: 'spike' }), [])
  t.is(carriedWords([]), '')
})
