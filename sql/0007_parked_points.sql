-- Dead letters of the persist worker: points PostgreSQL refused on their data
-- (not on a lost connection). A failing job is split until each refused point
-- is alone; every other point of the job is stored, and the refused ones are
-- parked here with the reason, for an operator to see (log line, health
-- detail, `npm run cli -- points:parked`), never retried by themselves.
-- `point` is the queued point as JSON text ([stat id, t, value, ikey]): JSON
-- escapes the characters that made PostgreSQL refuse it (a NUL in an ikey), so
-- the row itself can always be stored. A new table: takes no lock on others.
create table parked_points (
  id        bigint generated always as identity primary key,
  batch_id  text not null,
  stat_id   uuid not null,
  point     text not null,
  code      text,
  reason    text not null,
  parked_at timestamptz not null default now()
);
create index parked_points_parked_idx on parked_points (parked_at);
