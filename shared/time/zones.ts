// Time-zone names and instants written in a zone, for the server and the pages alike (plain Intl, no I/O).
//
// ICU, under Node and Chromium, still calls some zones by the names tzdata retired (Asia/Calcutta,
// Europe/Kiev): its canonical ids are CLDR's, which kept the old spellings. People look for the current
// names, so the zone list offers those and the account stores them; the legacy names stay accepted as input.

/** Legacy name -> current IANA name, for each legacy name Intl.supportedValuesOf('timeZone') returns (Node 20, ICU 7x). */
export const CURRENT_ZONE_NAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
}

/** The current name of a zone ("Asia/Calcutta" -> "Asia/Kolkata"); any other name as it is. */
export const currentZoneName = (name: string): string => CURRENT_ZONE_NAMES[name] ?? name

/** The zones this runtime knows, by their current names, sorted. */
export function zoneNames(): string[] {
  return [...new Set(Intl.supportedValuesOf('timeZone').map(currentZoneName))].sort()
}

/**
 * An instant as a person reads it in a zone, with the zone named: "25 Nov 2026, 17:40:12 CET" (or "UTC" when
 * the account has set none). A zone this runtime does not know falls back to UTC rather than failing a delivery.
 */
export function formatInstant(at: Date, zone: string | null): string {
  const fmt = (timeZone: string) =>
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    }).format(at)
  try {
    return fmt(zone ?? 'UTC')
  } catch {
    return fmt('UTC')
  }
}

const DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'].join('|')
const STORED_TIMES = new RegExp(
  `(\\d{4}-\\d{2}-\\d{2}) (\\d{2}:\\d{2})-\\d{2}:\\d{2} UTC|(?:on (${DAY_NAMES})s )?at (\\d{2}:\\d{2}) UTC`,
  'g',
)

/**
 * The anomaly detector's explanations (shared/anomalies/explain.ts), stored with UTC times ("2026-11-25
 * 04:00-05:00 UTC: at 04:00 UTC this stat is usually..."), with those times on the account's clock:
 * "2026-11-25 09:30-10:30 GMT+5:30: at 09:30 GMT+5:30 ...". An "at" or "on Mondays at" names the
 * same hour as the hour label before it, so that label's date places it (and may move its weekday). Without a
 * zone, or with UTC, the text is as stored.
 */
export function explanationInZone(text: string, zone: string | null): string {
  if (!zone || zone === 'UTC' || zone === 'Etc/UTC') return text
  let parts: Intl.DateTimeFormat
  try {
    parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'long',
      timeZoneName: 'short',
    })
  } catch {
    return text
  }
  const at = (ms: number) => Object.fromEntries(parts.formatToParts(ms).map((p) => [p.type, p.value])) as Record<string, string>
  const hm = (p: Record<string, string>) => `${p.hour}:${p.minute}`
  let day: string | null = null
  return text.replace(
    STORED_TIMES,
    (whole, date: string | undefined, from: string | undefined, weekday: string | undefined, time: string | undefined) => {
      if (date) {
        day = date
        const start = Date.parse(`${date}T${from}:00Z`)
        const a = at(start)
        return `${a.year}-${a.month}-${a.day} ${hm(a)}-${hm(at(start + 3_600_000))} ${a.timeZoneName}`
      }
      if (!day) return whole
      const a = at(Date.parse(`${day}T${time}:00Z`))
      return `${weekday ? `on ${a.weekday}s ` : ''}at ${hm(a)} ${a.timeZoneName}`
    },
  )
}
