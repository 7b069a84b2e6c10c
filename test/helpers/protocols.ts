// Shared by the protocol tests (line protocol, remote write, StatsD): accounts with a key, and what they
// hold read back through the v1 export API (raw points: names, values, whole-second timestamps).
import { createKey, signUp, type User } from './factories.js'
import { request } from './http.js'
import { settle, stored, type Stored } from './storage.js'
import type { TestApp } from './app.js'

export async function keyedAccount(app: TestApp, plan?: string): Promise<{ user: User; key: string }> {
  const user = await signUp(app.url)
  if (plan) await app.sql`update accounts set plan = ${plan} where id = ${user.accountId}`
  return { user, key: (await createKey(app.url, user)).key }
}

export type Readback = Record<string, { kind: string; points: Array<{ t: number; value: number }> }>

/**
 * Every series of the account with its points, once the queue has drained, read through GET /api/v1/export: an
 * untagged series under its stat's name, a tagged one as `name{k=v,k=v}` (keys sorted, docs/decisions.md §24).
 */
export async function readBack(app: TestApp, key: string): Promise<Readback> {
  await settle(app)
  const res = await request(app.url, '/api/v1/export?range=30d', { bearer: key })
  if (res.status !== 200) throw new Error(`export failed: ${res.status} ${res.text}`)
  const out: Readback = {}
  for (const s of res.body.stats as Array<{
    name: string
    kind: string
    points: Array<{ t: number; value: number; tags?: Record<string, string> }>
  }>) {
    for (const p of s.points) {
      const tags = p.tags
        ? Object.keys(p.tags)
            .sort()
            .map((k) => `${k}=${p.tags![k]}`)
        : []
      const name = tags.length ? `${s.name}{${tags.join(',')}}` : s.name
      out[name] ??= { kind: s.kind, points: [] }
      out[name].points.push({ t: p.t, value: p.value })
    }
  }
  return out
}

/** What the account holds (stats, points, queued points, allowance used), once the queue has drained. */
export async function snapshot(app: TestApp, accountId: string): Promise<Stored> {
  await settle(app)
  return stored(app, accountId)
}
