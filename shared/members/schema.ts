// Request and response shapes of the members, invitations, accounts and audit routes (docs/decisions.md §23).
import { z } from 'zod'
import { KEY_SCOPES, ROLES } from './roles.js'

export const RoleName = z.enum(ROLES)
export const ScopeName = z.enum(KEY_SCOPES)

export const MemberJson = z
  .object({
    id: z.uuid(),
    email: z.string(),
    role: RoleName,
    joined_at: z.iso.datetime(),
    last_sign_in_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Member' })
export const MemberList = z.object({ members: z.array(MemberJson) }).meta({ id: 'MemberList' })
export const MemberIdParams = z.object({ id: z.uuid() })
export const PatchMemberBody = z.object({ role: RoleName }).meta({ id: 'PatchMemberBody' })
export const MemberResponse = z.object({ member: MemberJson }).meta({ id: 'MemberResponse' })

export const InviteBody = z
  .object({ email: z.email({ error: 'must be an e-mail address' }).max(254), role: RoleName })
  .meta({ id: 'InviteBody' })
export const InvitationJson = z
  .object({ id: z.uuid(), email: z.string(), role: RoleName, expires_at: z.iso.datetime() })
  .meta({ id: 'Invitation' })
export const InvitationResponse = z.object({ invitation: InvitationJson }).meta({ id: 'InvitationResponse' })
export const InvitationList = z.object({ invitations: z.array(InvitationJson) }).meta({ id: 'InvitationList' })
export const AcceptBody = z.object({ token: z.string().min(1).max(200) }).meta({ id: 'AcceptInvitationBody' })
export const Accepted = z
  .object({ account: z.object({ id: z.uuid(), email: z.string() }), role: RoleName })
  .meta({ id: 'AcceptedInvitation' })

export const TransferBody = z.object({ member_id: z.uuid() }).meta({ id: 'TransferBody' })

export const AccountMembership = z
  .object({
    id: z.uuid(),
    email: z.string().describe("The account's name: its first owner's e-mail"),
    plan: z.string(),
    role: RoleName,
    active: z.boolean(),
  })
  .meta({ id: 'AccountMembership' })
export const AccountList = z.object({ accounts: z.array(AccountMembership) }).meta({ id: 'AccountList' })
export const SwitchBody = z.object({ account_id: z.uuid() }).meta({ id: 'SwitchAccountBody' })
// Leaving names the account: a tab still showing an account switched away from elsewhere cannot leave the wrong one.
export const LeaveBody = z.object({ account_id: z.uuid() }).meta({ id: 'LeaveAccountBody' })

export const AuditQuery = z.object({
  cursor: z
    .string()
    .regex(/^[0-9]{1,19}$/, { error: 'must be a next_cursor' })
    .optional(),
})
export const AuditEventJson = z
  .object({
    id: z.string(),
    at: z.iso.datetime(),
    actor: z.object({ type: z.enum(['person', 'key', 'billing']), id: z.string().nullable(), email: z.string().optional() }),
    action: z.string(),
    target: z.string(),
    ip: z.string().nullable(),
    summary: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEvent' })
export const AuditList = z.object({ events: z.array(AuditEventJson), next_cursor: z.string().nullable() }).meta({ id: 'AuditList' })
