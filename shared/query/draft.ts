// An answer before it is worded: a sentence with opaque placeholders
// ({{S1}} a stat name, {{P1}} a period, {{T1}} a time, {{V1}} a number) and
// the data records the numbers come from. The deterministic answer fills the
// placeholders in; a model only ever sees the placeholders, so it cannot type
// a number, and its sentence is filled in the same way.
import { formatNumber, formatTime } from './format.js'
import type { DataRecord } from './schema.js'

export interface Placeholder {
  token: string
  /** What the placeholder is replaced with. */
  text: string
  /** What it stands for, for a model (never the value itself). */
  meaning: string
  kind: 'stat' | 'period' | 'time' | 'value'
}

export class Draft {
  readonly data: DataRecord[] = []
  readonly placeholders: Placeholder[] = []
  text = ''
  /** `template` for fixed phrases (declines, nothing recorded), `deterministic` for computed answers. */
  source: 'template' | 'deterministic' = 'deterministic'

  /** `zone`: the time zone the answer's times are shown in (the one its periods were read in). */
  constructor(readonly zone = 'UTC') {}

  private add(kind: Placeholder['kind'], prefix: string, text: string, meaning: string): string {
    const same = this.placeholders.find((p) => p.kind === kind && p.text === text)
    if (same) return `{{${same.token}}}`
    const token = `${prefix}${this.placeholders.filter((p) => p.kind === kind).length + 1}`
    this.placeholders.push({ token, text, meaning, kind })
    return `{{${token}}}`
  }

  /** Adds a record to data and returns its index. */
  record(r: DataRecord): number {
    return this.data.push(r) - 1
  }

  stat(name: string, kind: string): string {
    return this.add('stat', 'S', name, `the name of a ${kind} stat`)
  }

  period(label: string): string {
    return this.add('period', 'P', label, 'a time period')
  }

  time(unixSeconds: number, withTime = true): string {
    return this.add('time', 'T', formatTime(unixSeconds, withTime, this.zone), withTime ? 'a date and time' : 'a date')
  }

  /** A number shown from a data record's field (the record must hold it, so the verifier can find it). */
  num(value: number, meaning: string, opts: { percent?: boolean; signed?: boolean; relError?: number } = {}): string {
    return this.add('value', 'V', formatNumber(value, opts), meaning)
  }

  /** Fills the placeholders of a sentence (the draft's own, or a model's). */
  fill(sentence = this.text): string {
    return sentence.replace(/\{\{([A-Z]\d+)\}\}/g, (all, token: string) => this.placeholders.find((p) => p.token === token)?.text ?? all)
  }

  /** What the verifier must not read as a claim: the stat names, period labels and times quoted (a zone such as Etc/GMT+5 holds digits). */
  quoted(): string[] {
    return this.placeholders.filter((p) => p.kind !== 'value').map((p) => p.text)
  }
}
