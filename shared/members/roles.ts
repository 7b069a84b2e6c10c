// Roles in an account (docs/decisions.md §23): owner > admin > member > viewer. A route declares the
// least role it needs (api/route.ts); a session below it is refused with 403 forbidden_role.
import { forbidden } from '../errors.js'

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const
export type Role = (typeof ROLES)[number]

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 }

export function roleAtLeast(have: Role, need: Role): boolean {
  return RANK[have] >= RANK[need]
}

/** 403 forbidden_role naming the role needed; nothing has run yet when it is thrown. */
export function requireRole(have: Role, need: Role): void {
  if (!roleAtLeast(have, need))
    throw forbidden('forbidden_role', `this needs the ${need} role (or higher) in this account; yours is ${have}`)
}

export const KEY_SCOPES = ['write', 'read', 'full'] as const
export type KeyScope = (typeof KEY_SCOPES)[number]
