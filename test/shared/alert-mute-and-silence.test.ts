// The rules of docs/decisions.md §18 on top of the state machine (shared/alerts/mute-and-silence.ts), as pure
// functions: what silence decides under each on_no_data, and what a mute withholds and later delivers.
import test from 'ava'
import { step, type Rule } from '../../shared/alerts/conditions.js'
import { applyMute, silenceVerdict, type Managed } from '../../shared/alerts/mute-and-silence.js'

const rule: Rule = { condition: 'above', threshold: 90, windowMinutes: 5, direction: 'above', cooldownMinutes: 0 }
const T0 = new Date('2026-11-25T10:00:00Z')
const at = (s: number) => new Date(T0.getTime() + s * 1000)
const ok: Managed = {
  state: 'ok',
  incidentId: null,
  incidentNotified: false,
  lastNotifiedAt: null,
  conditionSince: null,
  incidentMuted: false,
  resolveWithheld: null,
}

test('silenceVerdict: keep never decides; resolve and alert decide only past the window; conditions about missing data are left alone', (t) => {
  t.is(silenceVerdict(rule, 'keep', 10_000, 5), undefined)
  t.is(silenceVerdict(rule, 'resolve', 300, 5), undefined, 'exactly the window is not past it')
  t.is(silenceVerdict(rule, 'resolve', 301, 5), false)
  t.is(silenceVerdict(rule, 'alert', 301, 5), true)
  t.is(silenceVerdict(rule, 'alert', 301, 60), undefined)
  t.is(silenceVerdict(rule, 'alert', null, 5), undefined)
  t.is(silenceVerdict({ ...rule, condition: 'missing_data' }, 'alert', 10_000, 5), undefined)
  t.is(silenceVerdict({ ...rule, condition: 'sustained' }, 'resolve', 10_000, 5), false)
})

test('applyMute: a fire while muted is withheld and remembered; the cooldown is not restarted by it', (t) => {
  const s = step(rule, ok, true, at(0))
  const o = applyMute(ok, s, at(3600), at(0))
  t.is(o.deliver, undefined)
  t.is(o.next.state, 'firing')
  t.true(o.next.incidentMuted)
  t.false(o.next.incidentNotified)
  t.is(o.next.lastNotifiedAt, null)
  t.is(o.record?.event, 'muted')
})

test('applyMute: when the mute ends with the breach in force, the open incident is delivered once', (t) => {
  const muted = applyMute(ok, step(rule, ok, true, at(0)), at(60), at(0)).next
  const still = applyMute(muted, step(rule, muted, true, at(30)), at(60), at(30))
  t.is(still.deliver, undefined, 'still muted: nothing yet')
  const after = applyMute(still.next, step(rule, still.next, true, at(61)), at(60), at(61))
  t.is(after.deliver, 'fired')
  t.is(after.next.incidentId, muted.incidentId, 'the same incident')
  t.true(after.next.incidentNotified)
  t.false(after.next.incidentMuted)
  const later = applyMute(after.next, step(rule, after.next, true, at(75)), null, at(75))
  t.is(later.deliver, undefined, 'delivered once')
  t.is(later.record, undefined)
  const resolved = applyMute(later.next, step(rule, later.next, false, at(90)), null, at(90))
  t.is(resolved.deliver, 'resolved')
})

test('applyMute: a resolve while muted is withheld and delivered, with its incident, when the mute ends; a fire never delivered resolves without a delivery, saying why', (t) => {
  const fired = applyMute(ok, step(rule, ok, true, at(0)), null, at(0))
  t.is(fired.deliver, 'fired')
  const quiet = applyMute(fired.next, step(rule, fired.next, false, at(30)), at(3600), at(30))
  t.is(quiet.deliver, undefined)
  t.is(quiet.record?.event, 'muted')
  t.regex(quiet.record!.detail!, /^resolve withheld/)
  t.is(quiet.next.resolveWithheld, fired.next.incidentId)
  const stillMuted = applyMute(quiet.next, step(rule, quiet.next, false, at(60)), at(3600), at(60))
  t.is(stillMuted.releasedResolve, undefined)
  const ended = applyMute(stillMuted.next, step(rule, stillMuted.next, false, at(3601)), at(3600), at(3601))
  t.is(ended.releasedResolve, fired.next.incidentId!)
  t.is(ended.next.resolveWithheld, null)
  t.is(applyMute(ended.next, step(rule, ended.next, false, at(3615)), at(3600), at(3615)).releasedResolve, undefined, 'released once')
  // Lifted while a new breach is withheld: the old incident's resolve and the new fire both go.
  const again = applyMute(quiet.next, step(rule, quiet.next, true, at(90)), at(3600), at(90))
  t.true(again.next.incidentMuted)
  const lifted = applyMute(again.next, step(rule, again.next, true, at(100)), null, at(100))
  t.is(lifted.releasedResolve, fired.next.incidentId!)
  t.is(lifted.deliver, 'fired')
  t.is(lifted.next.incidentId, again.next.incidentId)
  const withheld = applyMute(ok, step(rule, ok, true, at(0)), at(3600), at(0)).next
  const gone = applyMute(withheld, step(rule, withheld, false, at(30)), at(3600), at(30))
  t.is(gone.deliver, undefined)
  t.deepEqual(gone.record, { event: 'resolved', detail: 'not delivered: its fire was withheld by a mute' })
  t.false(gone.next.incidentMuted)
})

test('applyMute: a fire held back by the cooldown is recorded as suppressed and is not delivered when nothing is muted', (t) => {
  const cooling: Managed = { ...ok, lastNotifiedAt: at(-60) }
  const o = applyMute(cooling, step({ ...rule, cooldownMinutes: 10 }, cooling, true, at(0)), null, at(0))
  t.is(o.deliver, undefined)
  t.is(o.record?.event, 'suppressed')
  const next = applyMute(o.next, step({ ...rule, cooldownMinutes: 10 }, o.next, true, at(15)), null, at(15))
  t.is(next.deliver, undefined)
})
