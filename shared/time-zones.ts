// Time-zone names and instants written in a zone, for the server and the pages alike (plain Intl, no I/O).
//
// ICU, under Node and Chromium, still calls some zones by the names tzdata retired (Asia/Calcutta,
// Europe/Kiev): its canonical ids are CLDR's, which kept the old spellings. People look for the current
// names, so the zone list offers those and the account stores them; the legacy names stay accepted as input.

/** Legacy name -> current IANA name, for each legacy name Intl.supportedValuesOf('timeZone') returns (Node 20, ICU 7x). */
export const CURRENT_ZONE_NAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara', 'America/Buenos_Aires': 'America/Argentina/Buenos_Aires', 'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan', 'America/Cordoba': 'America/Argentina/Cordoba', 'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis', 'America/Jujuy': 'America/Argentina/Jujuy', 'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza', 'Asia/Calcutta': 'Asia/Kolkata', 'Asia/Katmandu': 'Asia/Kathmandu', 'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh', 'Atlantic/Faeroe': 'Atlantic/Faroe', 'Europe/Kiev': 'Europe/Kyiv', 'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei', 'Pacific/Truk': 'Pacific/Chuuk',
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
  const fmt = (timeZone: string) => new Intl.DateTimeFormat('en-GB', {
    timeZone, day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short',
  }).format(at)
  try {
    return fmt(zone ?? 'UTC')
  } catch {
    return fmt('UTC')
  }
}
