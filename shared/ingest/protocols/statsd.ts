// StatsD and DogStatsD lines (docs/decisions.md §21): `<API_KEY>.<metric>:<value>|c|g|ms|h|d[|@rate][|#tag:value,...]`.
// `c` adds to a counter (divided by the sample rate), `g` records a gauge (a signed `+`/`-` relative gauge
// is refused: the service stores observations, not a running value it would have to hold), `ms`, `h` and `d`
// record gauge observations. DogStatsD's packed values (`name:1:2:3|h`) are each one observation, `|T<unix
// seconds>` is the point's time and Datadog's origin fields (`|c:`, `|e:`, `|card:`) are ignored; sets,
// events and service checks are refused.
import { parseNumber } from '../numbers.js'
import { accept, reject, type Parsed } from '../parsed.js'
import type { ValidPoint } from '../point.js'
import { parseTimestamp } from '../timestamps.js'
import { protocolSeries } from './stat-name.js'

export interface StatsdLine {
  /** The API key the line was prefixed with. */
  key: string
  points: ValidPoint[]
}

const TYPES = new Set(['c', 'g', 'ms', 'h', 'd'])

/** One line of a datagram (or of a TCP stream), without its newline. */
export function parseStatsdLine(line: string, nowSeconds: number): Parsed<StatsdLine> {
  if (line.startsWith('_e{') || line.startsWith('_sc|'))
    return reject('invalid_line', 'events and service checks are not metrics; they are not stored')
  const dot = line.indexOf('.')
  const colon = line.indexOf(':')
  if (dot <= 0 || colon === -1 || dot > colon)
    return reject('invalid_line', 'a line is <API key>.<metric>:<value>|<type>: the key prefix is missing')
  const key = line.slice(0, dot)
  const metric = line.slice(dot + 1, colon)
  if (!metric) return reject('invalid_line', 'the metric name is empty')
  const sections = line.slice(colon + 1).split('|')
  const values = sections[0].split(':')
  const type = sections[1]
  if (type === undefined) return reject('invalid_line', `metric "${metric}": no type (|c, |g, |ms, |h or |d)`)
  if (type === 's') return reject('invalid_line', `metric "${metric}": sets (|s) are not supported; send a counter or a gauge`)
  if (!TYPES.has(type)) return reject('invalid_line', `metric "${metric}": unknown type "|${type}"`)
  let rate = 1
  let tags: Array<[string, string]> = []
  let t: number | undefined
  for (const section of sections.slice(2)) {
    if (section.startsWith('@')) {
      rate = Number(section.slice(1))
      if (!/^@(?:0|1)?(?:\.[0-9]+)?$|^@1$/.test(section) || !(rate > 0 && rate <= 1))
        return reject('invalid_line', `metric "${metric}": invalid sample rate "${section}" (0 < rate <= 1)`)
    } else if (section.startsWith('#')) {
      tags = section
        .slice(1)
        .split(',')
        .filter(Boolean)
        .map((tag) => {
          const at = tag.indexOf(':')
          return at === -1 ? [tag, ''] : [tag.slice(0, at), tag.slice(at + 1)]
        })
    } else if (section.startsWith('T')) {
      const checked = parseTimestamp(section.slice(1), nowSeconds)
      if (!checked.ok) return reject(checked.code, `metric "${metric}": ${checked.message}`)
      t = checked.value
    } else if (!/^(?:c|e|card):/.test(section)) {
      return reject('invalid_line', `metric "${metric}": unknown field "|${section}"`)
    }
  }
  const name = protocolSeries(metric, tags)
  if (!name.ok) return reject(name.code, `metric "${metric}": ${name.message}`)
  const counter = type === 'c'
  const field = counter ? 'count' : 'value'
  const points: ValidPoint[] = []
  for (const raw of values) {
    if (type === 'g' && (raw.startsWith('+') || raw.startsWith('-')))
      return reject(
        'invalid_value',
        `metric "${metric}": a signed gauge ("${raw}") is a relative change, which is not supported; send the gauge's value`,
      )
    const parsed = parseNumber(raw, field)
    if (!parsed.ok) return reject(parsed.code, `metric "${metric}": ${parsed.message}`)
    // A counter sampled at 10 % stands for ten times what it says; the result obeys the same range rule.
    const value = counter && rate !== 1 ? parseNumber(parsed.value / rate, field) : parsed
    if (!value.ok) return reject(value.code, `metric "${metric}": ${value.message}`)
    points.push({ ...name.value, kind: counter ? 'counter' : 'gauge', value: value.value, t, ikey: undefined })
  }
  return accept({ key, points })
}
