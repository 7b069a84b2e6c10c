// One clock: every page writes times in one zone, the account's when it has set one
// (the shell puts it on <body data-time-zone>), else the browser's own, and in the browser's locale's
// way of writing dates and times (24-hour where that is the custom, not a forced US 12-hour form).

/** The zone this browser is in. */
export const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

/** The zone every time on the page is written in. */
export const ZONE = document.body.dataset.timeZone || BROWSER_ZONE

/** Formats instants in ZONE; `undefined` locale is the browser's. */
export const inZone = (o: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(undefined, { ...o, timeZone: ZONE })

const fmtWhen = inZone({ year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' })

/** An ISO instant as the browser's locale writes a date and time, with the zone's short name ("25 Nov 2026, 17:40 CET"). */
export const when = (iso: string | null | undefined) => (iso ? fmtWhen.format(Date.parse(iso)) : '—')

const wallParts = inZone({
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
})
/** The zone's wall clock at instant `ms`, as milliseconds of a UTC date reading the same. */
function wallAt(ms: number): number {
  const p: Record<string, number> = {}
  for (const part of wallParts.formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value)
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
}

/** The instant a datetime-local value ("2026-11-27T09:30") names when read on ZONE's clock, not the browser's. */
export function instantInZone(local: string): Date {
  const w = Date.parse(`${local}Z`)
  const guess = w - (wallAt(w) - w)
  return new Date(w - (wallAt(guess) - guess))
}
