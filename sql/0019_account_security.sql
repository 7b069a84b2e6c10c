-- Account recovery and two-factor sign-in (docs/decisions.md §19):
-- password-reset tokens, each account's TOTP secret, and its one-time
-- recovery codes. Adds nullable columns to accounts (no rewrite, brief lock);
-- the rest are new tables.

-- A reset link's token, stored as its sha256 only: valid an hour, used once.
create table password_resets (
  token_hash bytea primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at    timestamptz
);
create index password_resets_account_idx on password_resets (account_id);

-- TOTP (RFC 6238). The secret must be kept in clear to compute codes (like an alert's signing secret);
-- a secret being set up waits in totp_pending_secret until a first code proves the app holds it.
alter table accounts add column totp_secret text;
alter table accounts add column totp_pending_secret text;
alter table accounts add column totp_enabled_at timestamptz;
-- The time step of the last code accepted: a code is never accepted twice (replay).
alter table accounts add column totp_last_step bigint;

-- One-time recovery codes, sha256 of each (they are random, 50 bits and more): a code works once.
create table recovery_codes (
  account_id uuid not null references accounts (id) on delete cascade,
  code_hash  bytea not null,
  created_at timestamptz not null default now(),
  used_at    timestamptz,
  primary key (account_id, code_hash)
);
