import test from 'ava'
import { parseJob, type QueuedPoint } from '../../shared/jobs.js'

const stat = '0d8c3c4e-5b1f-4c3a-9e2d-7f6a5b4c3d2e'

test('persist-points: a batch of well-formed points parses to the same points', (t) => {
  const points: QueuedPoint[] = [[stat, 1_700_000_000, 1.5, null], [stat, 1_700_000_001, -2, 'retry-1']]
  t.deepEqual(parseJob('persist-points', { batch_id: 'b1', points }).points, points)
})

test('persist-points: malformed points are refused on either side of the queue', (t) => {
  for (const bad of [
    [],
    [['not-a-uuid', 1_700_000_000, 1, null]],
    [[stat, 1_700_000_000.5, 1, null]],
    [[stat, 1_700_000_000, Number.NaN, null]],
    [[stat, 1_700_000_000, '1', null]],
    [[stat, 1_700_000_000, 1, 7]],
    [[stat, 1_700_000_000, 1]],
    [[stat, 1_700_000_000, 1, null], 'x'],
    'points',
  ]) {
    const err = t.throws(() => parseJob('persist-points', { batch_id: 'b1', points: bad }), undefined, JSON.stringify(bad))
    t.regex(err?.message ?? '', /points must be a non-empty array/)
  }
  t.throws(() => parseJob('persist-points', { batch_id: '', points: [[stat, 1, 1, null]] }))
})
