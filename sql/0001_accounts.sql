-- Accounts, dashboard sessions and API keys: the identities every other table
-- hangs off. Creates new tables only; locks nothing that exists.

create table accounts (
  id            uuid primary key default gen_random_uuid(),
  email         text not null,
  password_hash text,
  plan          text not null default 'free' check (plan in ('free', 'starter', 'pro', 'business')),
  created_at    timestamptz not null default now()
);
-- E-mail addresses are unique whatever their case.
create unique index accounts_email_key on accounts (lower(email));

create table sessions (
  id          uuid primary key default gen_random_uuid(),
  account_id  uuid not null references accounts (id) on delete cascade,
  -- sha256 of the cookie value; the cookie itself is never stored.
  token_hash  bytea not null unique,
  csrf_token  text not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  revoked_at  timestamptz
);
create index sessions_account_idx on sessions (account_id);
create index sessions_expires_idx on sessions (expires_at);

create table api_keys (
  id           uuid primary key default gen_random_uuid(),
  account_id   uuid not null references accounts (id) on delete cascade,
  label        text not null check (char_length(label) between 1 and 100),
  -- Public lookup part of the key (shown in listings); the rest is secret.
  prefix       text not null unique,
  -- sha256 of the whole key, compared in constant time after the prefix lookup.
  secret_hash  bytea not null,
  created_at   timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
create index api_keys_account_idx on api_keys (account_id);
