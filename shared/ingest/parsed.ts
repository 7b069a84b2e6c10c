// Result of validating one untrusted field on the write path.
//
// Validators never throw: a rejection is data (a stable snake_case `code` for
// programs and tests, and the exact human `message` the interface prescribes,
// which the legacy envelope puts in `msg` and v1 puts in its problem body).
// Nothing is stored on a rejection (docs/decisions.md §I-2.2 rule 7), so callers only need
// to branch on `ok`.
export type Parsed<T> = { ok: true; value: T } | { ok: false; code: string; message: string }

export function accept<T>(value: T): Parsed<T> {
  return { ok: true, value }
}

export function reject<T = never>(code: string, message: string): Parsed<T> {
  return { ok: false, code, message }
}
