import test from 'ava'
import fc from 'fast-check'
import { packPoints, parseJob, pointsOf, type QueuedPoint } from '../../shared/jobs.js'

const stat = '0d8c3c4e-5b1f-4c3a-9e2d-7f6a5b4c3d2e'
const other = 'a1b2c3d4-e5f6-4a1b-8c2d-3e4f5a6b7c8d'

test('persist-points: points travel grouped by stat, each stat id once, and come back as sent', (t) => {
  const points: QueuedPoint[] = [
    [stat, 1_700_000_000, 1.5, null],
    [other, 1_700_000_000, 7, null],
    [stat, 1_700_000_001, -2, 'retry-1'],
  ]
  const stats = packPoints(points)
  t.deepEqual(stats, [
    [stat, [1_700_000_000, 1.5], [1_700_000_001, -2, 'retry-1']],
    [other, [1_700_000_000, 7]],
  ])
  t.deepEqual(pointsOf(parseJob('persist-points', { batch_id: 'b1', stats })), [points[0], points[2], points[1]])
})

test('persist-points: packing keeps every point and, within a stat, their order (first ikey wins downstream)', (t) => {
  const point = fc.tuple(
    fc.constantFrom(stat, other),
    fc.integer({ min: 0, max: 2 ** 40 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.option(fc.string(), { nil: null }),
  )
  fc.assert(
    fc.property(fc.array(point, { minLength: 1, maxLength: 50 }), (points) => {
      const back = pointsOf(parseJob('persist-points', { batch_id: 'b', stats: JSON.parse(JSON.stringify(packPoints(points))) }))
      for (const id of [stat, other]) {
        // JSON turns -0 into 0; the API never queues -0 (validatePoint stores 0).
        const norm = (ps: QueuedPoint[]) => ps.filter((p) => p[0] === id).map(([s, tt, v, k]) => [s, tt, v === 0 ? 0 : v, k])
        t.deepEqual(norm(back), norm(points))
      }
    }),
    { numRuns: 300 },
  )
})

test('persist-points: a job queued in the earlier form (one tuple per point) is still read', (t) => {
  const points: QueuedPoint[] = [
    [stat, 1_700_000_000, 1.5, null],
    [stat, 1_700_000_001, 2, 'k'],
  ]
  t.deepEqual(pointsOf(parseJob('persist-points', { batch_id: 'old', points })), points)
  t.throws(() => parseJob('persist-points', { batch_id: 'old', points: [[stat, 1.5, 1, null]] }))
})

test('persist-points: malformed payloads are refused on either side of the queue', (t) => {
  for (const bad of [
    [],
    [[stat]],
    [['not-a-uuid', [1_700_000_000, 1]]],
    [[stat, [1_700_000_000.5, 1]]],
    [[stat, [1_700_000_000, Number.NaN]]],
    [[stat, [1_700_000_000, '1']]],
    [[stat, [1_700_000_000, 1, 7]]],
    [[stat, [1_700_000_000]]],
    [[stat, [1_700_000_000, 1]], 'x'],
    'stats',
  ]) {
    const err = t.throws(() => parseJob('persist-points', { batch_id: 'b1', stats: bad }), undefined, JSON.stringify(bad))
    t.regex(err?.message ?? '', /stats must be a non-empty array/)
  }
  t.throws(() => parseJob('persist-points', { batch_id: '', stats: [[stat, [1, 1]]] }))
})
