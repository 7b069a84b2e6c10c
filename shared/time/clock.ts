// A time zone's wall clock, for everything that reckons in the account's zone: the question box's calendar
// periods (shared/query/periods.ts), the slots answers and retrieval bucket by (shared/query/answer.ts,
// retrieve.ts) and the times answers print (shared/query/format.ts). The zone's offset at an instant comes
// from @date-fns/tz (tzOffset, over the runtime's tz data); what to do with readings that happen twice or
// never (clocks going back or forward) is decided here, since a calendar period needs its own answer.
import { tzOffset } from '@date-fns/tz'

const DAY = 86_400_000

/** UTC and its aliases: slots by arithmetic, no offset to look up. */
const UTC_NAMES = ['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Universal', 'Zulu', 'Etc/Zulu']

/** Reads wall-clock time in one zone, and back. */
export class Clock {
  private readonly utc: boolean

  constructor(readonly zone: string) {
    this.utc = UTC_NAMES.includes(zone)
    if (!this.utc && Number.isNaN(tzOffset(zone, new Date(0)))) throw new RangeError(`Invalid time zone specified: ${zone}`)
  }

  /** The zone's offset from UTC at instant `ms`, in milliseconds (whole seconds: old local mean times have them). */
  private offset(ms: number): number {
    return this.utc ? 0 : Math.round(tzOffset(this.zone, new Date(ms)) * 60_000)
  }

  /** The zone's wall clock at instant `ms`, as milliseconds of a UTC date reading the same. */
  wall(ms: number): number {
    return ms + this.offset(ms)
  }

  /**
   * The instant the wall clock reads `w`. A reading that happens twice (clocks going back) is its
   * first; one that never happens (clocks going forward past it) is the moment of the jump, where a
   * day or hour starting in the gap really starts.
   */
  instant(w: number): number {
    const before = w - this.offset(w - DAY)
    const after = w - this.offset(w + DAY)
    const fits = [before, after].filter((t) => this.wall(t) === w)
    return fits.length ? Math.min(...fits) : Math.max(before, after)
  }

  /** The start (Unix seconds) of the zone's minute, hour or day holding instant `t`: slots on the zone's wall clock. */
  slotStart(t: number, slot: number): number {
    if (this.utc) return Math.floor(t / slot) * slot
    const w = this.wall(t * 1000)
    return this.instant(w - (((w % (slot * 1000)) + slot * 1000) % (slot * 1000))) / 1000
  }

  /**
   * The start of the slot after the one starting at `t`. A day is 23 to 25 hours where clocks change; the
   * hour the clocks go back through is on the wall clock twice, and is two slots.
   */
  nextSlot(t: number, slot: number): number {
    if (this.utc) return t + slot
    const next = this.slotStart(t + 1.5 * slot, slot)
    return next > t ? next : t + slot
  }

  /**
   * The largest rollup (60, 3,600 or 86,400 s) whose UTC buckets each lie inside one of the zone's slots of
   * `slot` seconds over [from, to]: the slot itself in UTC; hours where the zone is a whole number of hours
   * off UTC at both ends (a day's DST change moves it by whole hours); minutes otherwise (UTC+5:30).
   */
  finestFit(from: number, to: number, slot: number): number {
    if (this.utc || slot === 60) return slot
    return [from, to].every((t) => this.offset(t * 1000) % 3_600_000 === 0) ? 3_600 : 60
  }
}
