-- The write path: stats, raw points, idempotency records, applied batches and
-- the rollups (1 minute, 1 hour, 1 day) that charts and alerts read.
-- Creates new tables and one column on accounts (no rewrite, brief lock).

-- Free-tier slots (docs/decisions.md §5): claimed by a free account's first accepted point.
alter table accounts add column free_slot_claimed_at timestamptz;
create table free_tier (
  id      boolean primary key default true check (id),
  claimed integer not null default 0
);
insert into free_tier default values;

create table stats (
  id          uuid primary key default gen_random_uuid(),
  account_id  uuid not null references accounts (id) on delete cascade,
  name        text not null check (char_length(name) between 1 and 128),
  kind        text not null check (kind in ('counter', 'gauge')),
  description text check (char_length(description) <= 500),
  created_at  timestamptz not null default now(),
  unique (account_id, name)
);

-- Append-only observations: the same stat and ts may hold many rows.
create table points (
  stat_id uuid not null references stats (id) on delete cascade,
  ts      timestamptz not null,
  value   double precision not null
);
create index points_stat_ts_idx on points (stat_id, ts);

-- Durable idempotency record (stat + t + ikey): first write wins, even when Redis forgot.
create table point_ikeys (
  stat_id    uuid not null references stats (id) on delete cascade,
  ts         timestamptz not null,
  ikey       text not null,
  created_at timestamptz not null default now(),
  primary key (stat_id, ts, ikey)
);

-- Each persisted batch is recorded in the same transaction as its points, so a job that runs twice stores nothing twice.
create table applied_batches (
  id         text primary key,
  points     integer not null,
  applied_at timestamptz not null default now()
);
create index applied_batches_applied_idx on applied_batches (applied_at);

-- Per-minute aggregates of points persisted but not yet folded into the rollups.
-- Writers only append here (no contention); the refresh job claims rows with DELETE ... RETURNING.
create table rollup_pending (
  stat_id uuid not null references stats (id) on delete cascade,
  bucket  timestamptz not null,
  count   bigint not null,
  sum     double precision not null,
  min     double precision not null,
  max     double precision not null
);
create index rollup_pending_stat_idx on rollup_pending (stat_id, bucket);

create table rollups_1m (
  stat_id uuid not null references stats (id) on delete cascade,
  bucket  timestamptz not null,
  count   bigint not null,
  sum     double precision not null,
  min     double precision not null,
  max     double precision not null,
  primary key (stat_id, bucket)
);
create table rollups_1h (like rollups_1m including all);
alter table rollups_1h add foreign key (stat_id) references stats (id) on delete cascade;
create table rollups_1d (like rollups_1m including all);
alter table rollups_1d add foreign key (stat_id) references stats (id) on delete cascade;

-- When each stat's rollups last took in new points (anomaly diagnostics report it).
create table rollup_state (
  stat_id      uuid primary key references stats (id) on delete cascade,
  refreshed_at timestamptz not null
);
