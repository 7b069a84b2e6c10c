-- Teams (docs/decisions.md §23): accounts with members and roles, invitations, key scopes and
-- creators, the audit log, and the PagerDuty and Opsgenie alert channels.
--
-- A person is the accounts row they signed up with: its e-mail, password hash and two-factor
-- columns are the person's credentials, so every session, reset link and 2FA setting keeps working
-- as it was; memberships make that person a member of other accounts too. New tables, nullable or
-- defaulted columns (no rewrite on PostgreSQL 11+), and one check constraint swapped on alerts
-- (a scan under a brief lock).

create table memberships (
  account_id uuid not null references accounts (id) on delete cascade,
  person_id  uuid not null references accounts (id) on delete cascade,
  role       text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (account_id, person_id)
);
create index memberships_person_idx on memberships (person_id);
-- Today's accounts: their person is their sole owner.
insert into memberships (account_id, person_id, role, created_at) select id, id, 'owner', created_at from accounts;

-- The person's last sign-in (the members page shows it).
alter table accounts add column last_sign_in_at timestamptz;

-- The account a session acts on; null: the person's own (sessions opened before this migration).
alter table sessions add column active_account_id uuid references accounts (id) on delete cascade;

-- What a key may do, and who made it; keys made before are full, their creator the account's person.
alter table api_keys add column scope text not null default 'full' check (scope in ('write', 'read', 'full'));
alter table api_keys add column created_by uuid references accounts (id) on delete set null;
update api_keys set created_by = account_id;

-- An invitation: the token travels only in the mail; its sha256 is kept. Bound to the address.
create table invitations (
  id          uuid primary key default gen_random_uuid(),
  account_id  uuid not null references accounts (id) on delete cascade,
  email       text not null,
  role        text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  token_hash  bytea not null unique,
  invited_by  uuid references accounts (id) on delete set null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  accepted_at timestamptz,
  revoked_at  timestamptz
);
create index invitations_account_idx on invitations (account_id);

-- The audit log: one row per change, kept 400 days; never a secret in summary.
create table audit_events (
  id          bigint generated always as identity primary key,
  account_id  uuid not null references accounts (id) on delete cascade,
  at          timestamptz not null default now(),
  -- 'billing': the payment provider's word, applied by the billing sync (a plan change with no person behind it).
  actor_type  text not null check (actor_type in ('person', 'key', 'billing')),
  actor_id    uuid,
  actor_email text,
  action      text not null,
  target      text not null,
  ip          text,
  summary     jsonb not null default '{}'
);
create index audit_events_account_idx on audit_events (account_id, id desc);
create index audit_events_at_idx on audit_events (at);

-- On-call channels beside webhook, Slack and e-mail.
alter table alerts drop constraint alerts_channel_check;
alter table alerts add constraint alerts_channel_check check (channel in ('webhook', 'slack', 'email', 'pagerduty', 'opsgenie'));
