// Periods in questions: a small grammar of relative periods, calendar-aligned
// in the account's time zone (today, yesterday, last/past N units, this/last week|month|quarter|
// year, since <weekday|date>, on <weekday|date>, in <month>, between two dates
// or two hours), with an absolute-date reader as the fallback. A general date
// library reads "last week" as an instant seven days ago and "between 9 and 5"
// not at all, so the grammar is our own. Weeks start on Monday (ISO 8601).
// Rolling windows ("last 6 hours") start on a whole minute, the finest rollup.
//
// The rules reckon on the zone's wall clock written as if it were UTC, so that a
// day is always 24 hours and getUTCDay() is the local weekday; findPeriods turns
// their answer back into instants. Calendar bounds go through the zone's offset
// at that bound (a day in New York around a DST change is 23 or 25 hours long);
// rolling windows keep their length ("the last 6 hours" is six real hours). The zone's clock is
// shared/time/clock.ts.
import { Clock } from '../time/clock.js'

const DAY = 86_400_000
const HOUR = 3_600_000
const MINUTE = 60_000

export interface Span {
  from: Date
  to: Date
  label: string
}

export interface FoundPeriod extends Span {
  /** Where the phrase sits in the question (so the rest can be read for stat names). */
  start: number
  end: number
  /** A period that has not happened yet ("tomorrow", "next week"). */
  future?: boolean
  /** Why a period that has not happened yet cannot be answered, in words (no digits: a decline repeats it). */
  why?: string
  /** The period the phrase most naturally compares with ("this week" -> "last week"). */
  previous: () => Span
  /**
   * A period still running ("today", "this week"): the whole period before it ("yesterday",
   * "last week"), and the elapsed stretch both share ("Mon 00:00 to Wed 01:52"). `previous` is then
   * that stretch of the period before, so that two days are never set against seven.
   */
  sofar?: { whole: Span; stretch: string }
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const MONTH_RE =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)'
const WEEKDAY_RE = '(mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?'
const WORD_NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  'twenty four': 24,
  'twenty-four': 24,
  'forty eight': 48,
  'forty-eight': 48,
  ninety: 90,
}
const NUM_RE = `(\\d{1,4}|${Object.keys(WORD_NUMBERS)
  .sort((a, b) => b.length - a.length)
  .join('|')})`

const isoDate = (d: Date) => d.toISOString().slice(0, 10)
const hhmm = (d: Date) => d.toISOString().slice(11, 16)
const dayStart = (d: Date) => new Date(Math.floor(d.getTime() / DAY) * DAY)
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * DAY)
const monthStart = (y: number, m: number) => new Date(Date.UTC(y, m, 1))
/** Monday 00:00 UTC of the week holding d. */
const weekStart = (d: Date) => addDays(dayStart(d), -((d.getUTCDay() + 6) % 7))
const monthIndex = (word: string) => MONTHS.findIndex((m) => m.startsWith(word.slice(0, 3)))
const weekdayIndex = (word: string) => WEEKDAYS.findIndex((w) => w.startsWith(word.slice(0, 3)))
const num = (s: string) => (/^\d/.test(s) ? Number(s) : WORD_NUMBERS[s.replace(/\s+/, ' ')])
const unitMs = { minute: MINUTE, hour: HOUR, day: DAY, week: 7 * DAY } as const
const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`
/** "2026-11-16 to 2026-11-22" for a span of whole days (the end shown inclusive). */
const days = (from: Date, to: Date) =>
  to.getTime() - from.getTime() <= DAY ? isoDate(from) : `${isoDate(from)} to ${isoDate(addDays(to, -1))}`

/** A calendar span; its natural previous period is the one of equal length just before it. */
function span(tz: string, from: Date, to: Date, label: string, previous?: () => Span): Omit<FoundPeriod, 'start' | 'end'> {
  const prev =
    previous ??
    (() => {
      // Whole minutes: a window running to now ends mid-minute, and windows start on a minute.
      const len = Math.floor(to.getTime() / MINUTE) * MINUTE - from.getTime()
      const f = new Date(from.getTime() - len)
      const label =
        len % DAY === 0 && from.getTime() % DAY === 0
          ? `the period before (${days(f, from)} ${tz})`
          : len % HOUR === 0
            ? `the ${describeLength(len)} before`
            : `the same length of time before (${isoDate(f)} ${hhmm(f)} to ${isoDate(from)} ${hhmm(from)} ${tz})`
      return { from: f, to: from, label }
    })
  return { from, to, label, previous: prev }
}

const SHORT_DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const ordinal = (n: number) =>
  `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`

/**
 * The elapsed stretch a running period shares with the same stretch of the one before, in words
 * ("Mon 00:00 to Wed 01:52 Europe/Paris of each week"); the earlier one's dates when it was cut short
 * (this month running past the length of the last).
 */
function stretchOf(tz: string, unit: string, from: Date, now: Date, pf: Date, prevTo: Date): string {
  if (prevTo.getTime() - pf.getTime() < now.getTime() - from.getTime())
    return `${isoDate(pf)} ${hhmm(pf)} to ${isoDate(prevTo)} ${hhmm(prevTo)} ${tz}, all of last ${unit}, against ${isoDate(from)} ${hhmm(from)} to ${isoDate(now)} ${hhmm(now)} ${tz}`
  if (unit === 'week')
    return `${SHORT_DAYS[from.getUTCDay()]} ${hhmm(from)} to ${SHORT_DAYS[now.getUTCDay()]} ${hhmm(now)} ${tz} of each week`
  if (unit === 'month')
    return `the ${ordinal(from.getUTCDate())} ${hhmm(from)} to the ${ordinal(now.getUTCDate())} ${hhmm(now)} ${tz} of each month`
  const days = Math.floor((now.getTime() - from.getTime()) / DAY)
  return `the first ${days} days and ${hhmm(new Date(now.getTime() - days * DAY - from.getTime()))} hours of each ${unit}`
}

function describeLength(ms: number): string {
  if (ms % DAY === 0) return plural(ms / DAY, 'day')
  if (ms % HOUR === 0) return plural(ms / HOUR, 'hour')
  return plural(Math.round(ms / MINUTE), 'minute')
}

/** Reads one absolute date ("2026-11-20", "nov 20", "20 november 2026", "11/20"); null when it is not one. */
export function parseDate(text: string, now: Date): Date | null {
  const t = text
    .trim()
    .replace(/(\d)(st|nd|rd|th)\b/g, '$1')
    .replace(/,/g, ' ')
    .replace(/\s+/g, ' ')
  let m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(t)
  if (m) return valid(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  m = new RegExp(`^${MONTH_RE} (\\d{1,2})(?: (\\d{4}))?$`).exec(t)
  if (m) return withYear(monthIndex(m[1]), Number(m[2]), m[3], now)
  m = new RegExp(`^(\\d{1,2}) ${MONTH_RE}(?: (\\d{4}))?$`).exec(t)
  if (m) return withYear(monthIndex(m[2]), Number(m[1]), m[3], now)
  return null
}

function valid(y: number, m: number, d: number): Date | null {
  const date = new Date(Date.UTC(y, m, d))
  return date.getUTCMonth() === m && date.getUTCDate() === d ? date : null
}

/** A month and day without a year: the most recent one not in the future. */
function withYear(m: number, d: number, year: string | undefined, now: Date): Date | null {
  if (year) return valid(Number(year), m, d)
  const y = now.getUTCFullYear()
  const date = valid(y, m, d)
  return date && date > now ? valid(y - 1, m, d) : date
}

const DATE_RE = `(\\d{4}-\\d{1,2}-\\d{1,2}|${MONTH_RE} \\d{1,2}(?:st|nd|rd|th)?(?:,? \\d{4})?|\\d{1,2}(?:st|nd|rd|th)? ${MONTH_RE}(?:,? \\d{4})?)`

/** The most recent given weekday at or before today. */
function lastWeekday(word: string, now: Date): Date {
  const today = dayStart(now)
  return addDays(today, -((today.getUTCDay() - weekdayIndex(word) + 7) % 7))
}

/** "9", "9am", "5pm", "14:30", "noon" -> minutes after midnight; `pm` unknown when not said. */
function clock(h: string, min: string | undefined, ampm: string | undefined): { minutes: number; said: boolean } | null {
  let hour = h === 'noon' ? 12 : h === 'midnight' ? 0 : Number(h)
  if (hour > 24 || Number(min ?? 0) > 59) return null
  if (ampm === 'pm' && hour < 12) hour += 12
  if (ampm === 'am' && hour === 12) hour = 0
  return { minutes: hour * 60 + Number(min ?? 0), said: Boolean(ampm) || h === 'noon' || h === 'midnight' || hour > 12 }
}

type Rule = { re: RegExp; rolling?: true; read: (m: RegExpExecArray, now: Date, tz: string) => Omit<FoundPeriod, 'start' | 'end'> | null }

const CLOCK = '(\\d{1,2}|noon|midnight)(?::(\\d{2}))?(?:\\s*(am|pm))?'
const DAYWORD = `(today|yesterday|on ${DATE_RE}|on ${WEEKDAY_RE})`
/** A pattern with its groups made non-capturing, to embed without shifting group numbers. */
const nc = (re: string) => re.replace(/\((?!\?)/g, '(?:')

/** Rules in priority order: a longer, more specific phrase is tried before the phrases inside it. */
const RULES: Rule[] = [
  {
    // between 9 and 5 (yesterday) / from 14:00 to 15:30 today: hours of one day; "9 and 5" reads 09:00-17:00
    re: new RegExp(`\\b(?:${nc(DAYWORD)}\\s+)?(?:between|from)\\s+${CLOCK}\\s+(?:and|to|until|-)\\s+${CLOCK}(?:\\s+${nc(DAYWORD)})?`, 'g'),
    read: (m, now, tz) => {
      const a = clock(m[1], m[2], m[3])
      const b = clock(m[4], m[5], m[6])
      if (!a || !b) return null
      let end = b.minutes
      if (end <= a.minutes && !b.said && end < 12 * 60) end += 12 * 60
      if (end <= a.minutes) return null
      // The day may come before or after the hours: "yesterday between 9 and 5", "from 2pm to 3pm on monday".
      const dayText = new RegExp(`^${DAYWORD}\\s`).exec(m[0])?.[1] ?? new RegExp(`\\s${DAYWORD}$`).exec(m[0])?.[1]
      let day = dayStart(now)
      let dayLabel = 'today'
      if (dayText === 'yesterday') {
        day = addDays(day, -1)
        dayLabel = 'yesterday'
      } else if (dayText?.startsWith('on ')) {
        const w = dayText.slice(3)
        const d = new RegExp(`^${WEEKDAY_RE}$`).test(w) ? lastWeekday(w, now) : parseDate(w, now)
        if (!d) return null
        day = d
        dayLabel = `on ${isoDate(d)}`
      }
      const from = new Date(day.getTime() + a.minutes * MINUTE)
      const to = new Date(day.getTime() + end * MINUTE)
      const label = `${dayLabel} between ${hhmm(from)} and ${end === 24 * 60 ? '24:00' : hhmm(to)} ${tz}`
      return {
        ...span(tz, from, to, label, () => ({
          from: addDays(from, -1),
          to: addDays(to, -1),
          label: `the same hours the day before (${isoDate(addDays(from, -1))})`,
        })),
        future: from > now,
      }
    },
  },
  {
    // between 2026-11-01 and 2026-11-07 / from nov 1 to nov 7: whole days, both included
    re: new RegExp(`\\b(?:between|from)\\s+${DATE_RE}\\s+(?:and|to|until|through|-)\\s+${DATE_RE}`, 'g'),
    read: (m, now, tz) => {
      const parts = /^(?:between|from)\s+(.+?)\s+(?:and|to|until|through|-)\s+(.+)$/.exec(m[0])
      const a = parts && parseDate(parts[1], now)
      const b = parts && parseDate(parts[2], now)
      if (!a || !b || b < a) return null
      const to = addDays(b, 1)
      return { ...span(tz, a, to, `from ${isoDate(a)} to ${isoDate(b)} ${tz}`), future: a > now }
    },
  },
  {
    // last/past/previous N units, "the last 24h", "past 7d"
    rolling: true,
    re: new RegExp(
      `\\b(?:in |over |during |for )?(?:the )?(?:last|past|previous|trailing)\\s+${NUM_RE}\\s*(minutes?|mins?|hours?|hrs?|h|days?|d|weeks?|wks?|w|months?)\\b`,
      'g',
    ),
    read: (m, now, tz) => {
      const n = num(m[1])
      if (!n) return null
      const u = m[2]
      const unit = u.startsWith('mi')
        ? 'minute'
        : u.startsWith('h')
          ? 'hour'
          : u.startsWith('d')
            ? 'day'
            : u.startsWith('w')
              ? 'week'
              : 'month'
      const to = now
      const end = Math.floor(now.getTime() / MINUTE) * MINUTE
      const from =
        unit === 'month'
          ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes()))
          : new Date(end - n * unitMs[unit])
      return span(tz, from, to, `in the last ${plural(n, unit)}`)
    },
  },
  {
    // the last/past hour|day, the past week|month: rolling windows ("last week" alone is the calendar week, below)
    rolling: true,
    re: /\b(?:in |over |during |for )?(?:the )?(last|past) (hour|24 hours|day|week|month)\b/g,
    read: (m, now, tz) => {
      const unit = m[2] === '24 hours' ? 'day' : (m[2] as 'hour' | 'day' | 'week' | 'month')
      if (m[1] === 'last' && (unit === 'week' || unit === 'month')) return null
      const end = Math.floor(now.getTime() / MINUTE) * MINUTE
      const from =
        unit === 'month'
          ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes()))
          : new Date(end - unitMs[unit])
      return span(tz, from, now, `in the last ${unit === 'day' ? '24 hours' : unit === 'week' ? '7 days' : unit}`)
    },
  },
  {
    re: new RegExp(`\\bsince\\s+(yesterday|${WEEKDAY_RE}|${DATE_RE})`, 'g'),
    read: (m, now, tz) => {
      const w = m[1]
      const from =
        w === 'yesterday' ? addDays(dayStart(now), -1) : new RegExp(`^${WEEKDAY_RE}$`).test(w) ? lastWeekday(w, now) : parseDate(w, now)
      if (!from) return null
      return { ...span(tz, from, now, `since ${isoDate(from)} (${tz})`), future: from > now }
    },
  },
  {
    // N days ago: that whole day; N weeks ago: that calendar week
    re: new RegExp(`\\b${NUM_RE}\\s+(days?|weeks?)\\s+ago\\b`, 'g'),
    read: (m, now, tz) => {
      const n = num(m[1])
      if (!n) return null
      if (m[2].startsWith('day')) {
        const from = addDays(dayStart(now), -n)
        return span(tz, from, addDays(from, 1), `on ${isoDate(from)} (${tz})`)
      }
      const from = addDays(weekStart(now), -7 * n)
      return span(tz, from, addDays(from, 7), `the week of ${isoDate(from)} (${days(from, addDays(from, 7))} ${tz})`)
    },
  },
  {
    re: /\b(?:the )?day before yesterday\b/g,
    read: (_m, now, tz) => {
      const from = addDays(dayStart(now), -2)
      return span(tz, from, addDays(from, 1), `on ${isoDate(from)} (${tz})`)
    },
  },
  {
    re: /\b(?:so far )?today(?: so far)?\b|\bthis (?:morning|afternoon|evening)\b/g,
    read: (_m, now, tz) => {
      const from = dayStart(now)
      const y = addDays(from, -1)
      return {
        ...span(tz, from, now, `today (${isoDate(from)} ${tz}, so far)`, () => ({
          from: y,
          to: addDays(now, -1),
          label: `yesterday up to the same time (${isoDate(y)} until ${hhmm(now)} ${tz})`,
        })),
        sofar: {
          whole: { from: y, to: from, label: `the whole of yesterday (${isoDate(y)} ${tz})` },
          stretch: `00:00 to ${hhmm(now)} ${tz} of each day`,
        },
      }
    },
  },
  {
    re: /\byesterday\b/g,
    read: (_m, now, tz) => {
      const from = addDays(dayStart(now), -1)
      return span(tz, from, addDays(from, 1), `yesterday (${isoDate(from)} ${tz})`, () => ({
        from: addDays(from, -1),
        to: from,
        label: `the day before (${isoDate(addDays(from, -1))} ${tz})`,
      }))
    },
  },
  {
    rolling: true,
    re: /\b(tomorrow|next (?:hour|day|week|month|quarter|year|\d+ \w+))\b/g,
    read: (m, now, tz) => ({ ...span(tz, now, new Date(now.getTime() + DAY), m[1]), future: true }),
  },
  {
    // this / last / the weekend: Saturday 00:00 to Monday 00:00. "The weekend" is the latest one: this one while it
    // runs, else the one just past; "this weekend" on a weekday has not begun (the answer says so and offers the last).
    re: /\b(?:(?:over|on|during|at|for|in) )?(this|last|previous|past|the) weekend\b/g,
    read: (m, now, tz) => {
      const dow = now.getUTCDay()
      const running = dow === 6 || dow === 0
      const sat = addDays(dayStart(now), -(dow === 6 ? 0 : dow + 1))
      const which = m[1] === 'this' || (m[1] === 'the' && running) ? 'this' : 'last'
      if (which === 'this' && !running) {
        const next = addDays(sat, 7)
        return {
          ...span(tz, next, addDays(next, 2), `this weekend (${days(next, addDays(next, 2))} ${tz})`),
          future: true,
          why: 'this weekend has not begun yet (it starts on Saturday), so nothing is recorded for it; ask for last weekend',
        }
      }
      if (which === 'this') {
        const before = addDays(sat, -7)
        return {
          ...span(tz, sat, now, `this weekend (since ${isoDate(sat)} ${tz}, so far)`, () => ({
            from: before,
            to: addDays(now, -7),
            label: `last weekend up to the same point (${isoDate(before)} until ${isoDate(addDays(now, -7))} ${hhmm(now)} ${tz})`,
          })),
          sofar: {
            whole: { from: before, to: addDays(before, 2), label: `the whole of last weekend (${days(before, addDays(before, 2))} ${tz})` },
            stretch: `Sat 00:00 to ${SHORT_DAYS[dow]} ${hhmm(now)} ${tz} of each weekend`,
          },
        }
      }
      const from = running ? addDays(sat, -7) : sat
      const to = addDays(from, 2)
      return span(tz, from, to, `last weekend (${days(from, to)} ${tz})`, () => ({
        from: addDays(from, -7),
        to: addDays(to, -7),
        label: `the weekend before (${days(addDays(from, -7), addDays(to, -7))} ${tz})`,
      }))
    },
  },
  {
    re: /\b(this|current|last|previous|past) (week|month|quarter|year)\b/g,
    read: (m, now, tz) => {
      const current = m[1] === 'this' || m[1] === 'current'
      const unit = m[2]
      const y = now.getUTCFullYear()
      const mo = now.getUTCMonth()
      const bounds = (k: number): [Date, Date] => {
        if (unit === 'week') return [addDays(weekStart(now), 7 * k), addDays(weekStart(now), 7 * (k + 1))]
        if (unit === 'month') return [monthStart(y, mo + k), monthStart(y, mo + k + 1)]
        if (unit === 'quarter') return [monthStart(y, mo - (mo % 3) + 3 * k), monthStart(y, mo - (mo % 3) + 3 * (k + 1))]
        return [monthStart(y + k, 0), monthStart(y + k + 1, 0)]
      }
      const [from, end] = bounds(current ? 0 : -1)
      const [pf, pt] = bounds(current ? -1 : -2)
      const to = current ? now : end
      const label = current ? `this ${unit} (since ${isoDate(from)} ${tz}, so far)` : `last ${unit} (${days(from, end)} ${tz})`
      // "This week" so far is set against the same stretch of last week, not the whole of it.
      const elapsed = now.getTime() - from.getTime()
      const prevTo = new Date(Math.min(pf.getTime() + elapsed, pt.getTime()))
      const found = span(tz, from, to, label, () =>
        current
          ? {
              from: pf,
              to: prevTo,
              label: `last ${unit} up to the same point (${isoDate(pf)} until ${isoDate(prevTo)} ${hhmm(prevTo)} ${tz})`,
            }
          : { from: pf, to: pt, label: `the ${unit} before (${days(pf, pt)} ${tz})` },
      )
      if (!current) return found
      return {
        ...found,
        sofar: {
          whole: { from: pf, to: pt, label: `the whole of last ${unit} (${days(pf, pt)} ${tz})` },
          stretch: stretchOf(tz, unit, from, now, pf, prevTo),
        },
      }
    },
  },
  {
    re: new RegExp(`\\bin\\s+${MONTH_RE}(?:\\s+(\\d{4}))?\\b`, 'g'),
    read: (m, now, tz) => {
      const mi = monthIndex(m[1])
      let y = m[2] ? Number(m[2]) : now.getUTCFullYear()
      if (!m[2] && monthStart(y, mi) > now) y -= 1
      const from = monthStart(y, mi)
      const end = monthStart(y, mi + 1)
      const to = new Date(Math.min(end.getTime(), now.getTime()))
      return {
        ...span(tz, from, to, `in ${MONTHS[mi][0].toUpperCase()}${MONTHS[mi].slice(1)} ${y} (${tz}${end > now ? ', so far' : ''})`),
        future: from > now,
      }
    },
  },
  {
    // on <date>, a bare date, on <weekday>, a bare weekday: that whole day
    re: new RegExp(`\\b(?:on\\s+)?(?:(last|this)\\s+)?(${DATE_RE}|${WEEKDAY_RE})\\b`, 'g'),
    read: (m, now, tz) => {
      const w = m[2]
      let from = new RegExp(`^${WEEKDAY_RE}$`).test(w) ? lastWeekday(w, now) : parseDate(w, now)
      if (!from) return null
      if (m[1] === 'last' && from.getTime() === dayStart(now).getTime()) from = addDays(from, -7)
      const end = addDays(from, 1)
      return {
        ...span(
          tz,
          from,
          new Date(Math.min(end.getTime(), now.getTime())),
          `on ${isoDate(from)} (${tz}${end > now ? ', so far' : ''})`,
          () => ({
            from: addDays(from!, -1),
            to: from!,
            label: `the day before (${isoDate(addDays(from!, -1))} ${tz})`,
          }),
        ),
        future: from > now,
      }
    },
  },
]

function toInstants(p: Span, convert: (d: Date) => Date): Span {
  return { from: convert(p.from), to: convert(p.to), label: p.label }
}

/**
 * Every period phrase in a (lower-case) question, in the order they appear, as calendar periods of
 * `zone` (an IANA name; UTC when not given). A phrase already taken by an earlier rule is not read
 * again by a later one.
 */
export function findPeriods(question: string, now: Date, zone = 'UTC'): FoundPeriod[] {
  const clock = new Clock(zone)
  const wallNow = clock.wall(now.getTime())
  const calendar = (d: Date) => (d.getTime() === wallNow ? now : new Date(clock.instant(d.getTime())))
  const rolling = (d: Date) => new Date(now.getTime() + (d.getTime() - wallNow))
  const taken: Array<[number, number]> = []
  const found: FoundPeriod[] = []
  for (const rule of RULES) {
    rule.re.lastIndex = 0
    for (let m = rule.re.exec(question); m; m = rule.re.exec(question)) {
      const start = m.index
      const end = start + m[0].length
      if (taken.some(([a, b]) => start < b && end > a)) continue
      const p = rule.read(m, new Date(wallNow), zone)
      if (!p) continue
      taken.push([start, end])
      const convert = rule.rolling ? rolling : calendar
      found.push({
        ...p,
        ...toInstants(p, convert),
        start,
        end,
        previous: () => toInstants(p.previous(), convert),
        ...(p.sofar ? { sofar: { whole: toInstants(p.sofar.whole, convert), stretch: p.sofar.stretch } } : {}),
      })
    }
  }
  return found.sort((a, b) => a.start - b.start)
}

/** The default period when a question names none: the last 24 hours. */
export function defaultPeriod(now: Date): Span & { previous: () => Span } {
  const end = Math.floor(now.getTime() / MINUTE) * MINUTE
  const from = new Date(end - DAY)
  return {
    from,
    to: now,
    label: 'in the last 24 hours',
    previous: () => ({ from: new Date(from.getTime() - DAY), to: from, label: 'the 24 hours before' }),
  }
}
