-- Public share tokens for stats (docs/decisions.md §I-4.3, §I-4.6 embed). One live token per
-- stat; posting again rotates it. Only the token's sha256 is stored.
-- Creates a new table; locks nothing that exists.
create table stat_shares (
  stat_id    uuid primary key references stats (id) on delete cascade,
  token_hash bytea not null,
  created_at timestamptz not null default now()
);
