// Teams (docs/decisions.md §23): the person's accounts and the switch between them, an account's members and
// their roles, invitations, ownership transfer, and the audit log.
import { listAudit } from '../../shared/audit/audit.js'
import { switchSessionAccount } from '../../shared/auth/sessions.js'
import { conflict, forbidden, notFound } from '../../shared/errors.js'
import { findAccountById } from '../../shared/accounts/repo.js'
import {
  acceptInvitation,
  createInvitation,
  invitationJson,
  listInvitations,
  mailInvitation,
  revokeInvitation,
} from '../../shared/members/invitations.js'
import { accountsOfPerson, listMembers, removeMember, setMemberRole, transferOwnership } from '../../shared/members/repo.js'
import { requireRole } from '../../shared/members/roles.js'
import {
  AcceptBody,
  Accepted,
  AccountList,
  AuditList,
  AuditQuery,
  InvitationList,
  InvitationResponse,
  InviteBody,
  LeaveBody,
  MemberIdParams,
  MemberList,
  PatchMemberBody,
  SwitchBody,
  TransferBody,
} from '../../shared/members/schema.js'
import { accountOf, baseUrl, personOf, type Ctx } from '../context.js'
import { invalid } from '../../shared/errors.js'
import type { Routes } from '../route.js'

const memberJson = (m: Awaited<ReturnType<typeof listMembers>>[number]) => ({
  id: m.id,
  email: m.email,
  role: m.role,
  joined_at: m.joinedAt.toISOString(),
  last_sign_in_at: m.lastSignInAt?.toISOString() ?? null,
})

function memberId(params: Record<string, string>): string {
  const id = MemberIdParams.safeParse(params)
  if (!id.success) throw invalid('invalid_id', 'id must be a UUID')
  return id.data.id
}

/** The member's current role; an admin may not act on an owner, nor make one (docs/decisions.md §23). */
async function targetMember(ctx: Ctx, id: string) {
  const m = (await listMembers(ctx.deps.sql, accountOf(ctx).id)).find((x) => x.id === id)
  if (!m) throw notFound('member')
  if (m.role === 'owner') requireRole(ctx.state.role!, 'owner')
  return m
}

export function memberRoutes(routes: Routes): void {
  routes
    .add(
      {
        method: 'get',
        path: '/api/v1/accounts',
        tag: 'members',
        summary: "The signed-in person's accounts, with their role in each and which one the session acts on",
        auth: ['session'],
        role: 'person',
        responses: { 200: { description: 'The accounts', schema: AccountList } },
      },
      async (ctx) => {
        const active = ctx.state.session!.activeAccountId
        const rows = await accountsOfPerson(ctx.deps.sql, personOf(ctx).id)
        ctx.body = { accounts: rows.map((a) => ({ id: a.id, email: a.email, plan: a.plan, role: a.role, active: a.id === active })) }
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/session/account',
        tag: 'members',
        summary: 'Make the session act on another of the person’s accounts',
        auth: ['session'],
        role: 'person',
        audit: false,
        body: SwitchBody,
        responses: { 200: { description: 'Switched', schema: AccountList } },
        errors: [404],
      },
      async (ctx, { body }) => {
        const person = personOf(ctx)
        // Not a member and no such account answer alike: an id says nothing about accounts one is not in.
        if (!(await switchSessionAccount(ctx.deps.sql, ctx.state.session!.id, person.id, body.account_id))) throw notFound('account')
        const rows = await accountsOfPerson(ctx.deps.sql, person.id)
        ctx.body = {
          accounts: rows.map((a) => ({ id: a.id, email: a.email, plan: a.plan, role: a.role, active: a.id === body.account_id })),
        }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/members',
        tag: 'members',
        summary: "The account's members with their role and last sign-in",
        auth: ['session'],
        responses: { 200: { description: 'The members', schema: MemberList } },
      },
      async (ctx) => {
        ctx.body = { members: (await listMembers(ctx.deps.sql, accountOf(ctx).id)).map(memberJson) }
      },
    )
    .add(
      {
        method: 'patch',
        path: '/api/v1/members/:id',
        tag: 'members',
        summary: "Change a member's role (admins: not an owner's, and not to owner); the last owner stays (409 last_owner)",
        auth: ['session'],
        role: 'admin',
        body: PatchMemberBody,
        responses: { 200: { description: 'Changed', schema: MemberList } },
        errors: [404, 409],
      },
      async (ctx, { body, params }) => {
        const id = memberId(params)
        await targetMember(ctx, id)
        if (body.role === 'owner') requireRole(ctx.state.role!, 'owner')
        const before = await setMemberRole(ctx.deps.sql, accountOf(ctx).id, id, body.role)
        ctx.state.audit = { target: `member:${id}`, summary: { before: { role: before }, after: { role: body.role } } }
        ctx.body = { members: (await listMembers(ctx.deps.sql, accountOf(ctx).id)).map(memberJson) }
      },
    )
    .add(
      {
        method: 'delete',
        path: '/api/v1/members/:id',
        tag: 'members',
        summary: 'Remove a member (admins: not an owner); refused from their next request; the last owner stays (409 last_owner)',
        auth: ['session'],
        role: 'admin',
        responses: { 204: { description: 'Removed' } },
        errors: [404, 409],
      },
      async (ctx, { params }) => {
        const id = memberId(params)
        const m = await targetMember(ctx, id)
        const before = await removeMember(ctx.deps.sql, accountOf(ctx).id, id)
        ctx.state.audit = { target: `member:${id}`, summary: { before: { email: m.email, role: before } } }
        ctx.status = 204
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/account/leave',
        tag: 'members',
        summary:
          "Leave the session's account (any role; its id in the body must be the session's); the last owner stays (409 last_owner). The session then acts on the person's next account",
        auth: ['session'],
        role: 'viewer',
        body: LeaveBody,
        responses: { 200: { description: 'Left; the accounts the person still belongs to', schema: AccountList } },
        errors: [409],
      },
      async (ctx, { body }) => {
        const account = accountOf(ctx)
        if (body.account_id !== account.id)
          throw conflict('not_active_account', 'account_id is not the account this session acts on; nothing was changed')
        const person = personOf(ctx)
        const before = await removeMember(ctx.deps.sql, account.id, person.id)
        ctx.state.audit = { target: `member:${person.id}`, summary: { before: { email: person.email, role: before } } }
        const rows = await accountsOfPerson(ctx.deps.sql, person.id)
        const next = rows[0]?.id
        if (next) await switchSessionAccount(ctx.deps.sql, ctx.state.session!.id, person.id, next)
        ctx.body = { accounts: rows.map((a) => ({ id: a.id, email: a.email, plan: a.plan, role: a.role, active: a.id === next })) }
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/account/transfer',
        tag: 'members',
        summary: 'Hand ownership to another member: they become owner, the caller admin',
        auth: ['session'],
        role: 'owner',
        body: TransferBody,
        responses: { 200: { description: 'Transferred', schema: MemberList } },
        errors: [404],
      },
      async (ctx, { body }) => {
        await transferOwnership(ctx.deps.sql, accountOf(ctx).id, personOf(ctx).id, body.member_id)
        ctx.state.audit = {
          target: `member:${body.member_id}`,
          summary: { after: { owner: body.member_id, previous_owner: personOf(ctx).id } },
        }
        ctx.body = { members: (await listMembers(ctx.deps.sql, accountOf(ctx).id)).map(memberJson) }
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/members/invitations',
        tag: 'members',
        summary: 'Invite an address with a role: a link valid 7 days, once, for that address only (the token travels only in the mail)',
        auth: ['session'],
        role: 'admin',
        body: InviteBody,
        responses: { 201: { description: 'Invited (the same answer whether the address has a login or not)', schema: InvitationResponse } },
        errors: [409, 429, 503],
      },
      async (ctx, { body }) => {
        if (body.role === 'owner') requireRole(ctx.state.role!, 'owner')
        const { config, sql } = ctx.deps
        const person = personOf(ctx)
        const { invitation, token } = await createInvitation(sql, accountOf(ctx).id, person.id, body.email, body.role)
        try {
          await mailInvitation(config, baseUrl(ctx), person.email, invitation.email, token)
        } catch (err) {
          await revokeInvitation(sql, accountOf(ctx).id, invitation.id).catch(() => {})
          throw err
        }
        ctx.state.audit = { target: `invitation:${invitation.id}`, summary: { after: { email: invitation.email, role: invitation.role } } }
        ctx.status = 201
        ctx.body = { invitation: invitationJson(invitation) }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/members/invitations',
        tag: 'members',
        summary: 'Pending invitations',
        auth: ['session'],
        role: 'admin',
        responses: { 200: { description: 'The pending invitations', schema: InvitationList } },
      },
      async (ctx) => {
        ctx.body = { invitations: (await listInvitations(ctx.deps.sql, accountOf(ctx).id)).map(invitationJson) }
      },
    )
    .add(
      {
        method: 'delete',
        path: '/api/v1/members/invitations/:id',
        tag: 'members',
        summary: 'Revoke a pending invitation (its link stops working)',
        auth: ['session'],
        role: 'admin',
        responses: { 204: { description: 'Revoked' } },
        errors: [404],
      },
      async (ctx, { params }) => {
        const inv = await revokeInvitation(ctx.deps.sql, accountOf(ctx).id, memberId(params))
        ctx.state.audit = { target: `invitation:${inv.id}`, summary: { before: { email: inv.email, role: inv.role } } }
        ctx.status = 204
      },
    )
    .add(
      {
        method: 'post',
        path: '/api/v1/invitations/accept',
        tag: 'members',
        summary:
          "Accept an invitation with the token of its link; the session's e-mail must be the invited one. The session then acts on that account",
        auth: ['session'],
        role: 'person',
        body: AcceptBody,
        responses: { 200: { description: 'Joined', schema: Accepted } },
        errors: [409],
      },
      async (ctx, { body }) => {
        const person = personOf(ctx)
        const { accountId, role, invitationId } = await acceptInvitation(ctx.deps.sql, body.token, person)
        await switchSessionAccount(ctx.deps.sql, ctx.state.session!.id, person.id, accountId)
        const account = await findAccountById(ctx.deps.sql, accountId)
        if (!account) throw forbidden('invalid_invitation', 'the account is gone')
        ctx.state.audit = { accountId, target: `invitation:${invitationId}`, summary: { after: { member: person.email, role } } }
        ctx.body = { account: { id: account.id, email: account.email }, role }
      },
    )
    .add(
      {
        method: 'get',
        path: '/api/v1/audit',
        tag: 'members',
        summary: "The account's audit log, newest first, 50 a page (next_cursor for the next); kept 400 days",
        auth: ['session'],
        role: 'admin',
        query: AuditQuery,
        responses: { 200: { description: 'Events', schema: AuditList } },
      },
      async (ctx, { query }) => {
        ctx.body = await listAudit(ctx.deps.sql, accountOf(ctx).id, query.cursor)
      },
    )
}
