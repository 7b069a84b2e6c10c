-- Imports of saved export files (docs/decisions.md §I-4.6.2, §9 and §15).
-- The API analyses the upload once, decides what is accepted (kinds, quotas,
-- duplicates) and stores the accepted points here, packed, with the summary it
-- answered; the import job persists them in batches and records its progress
-- on the row. Creates a new table; locks nothing that exists.

create table imports (
  id               uuid primary key default gen_random_uuid(),
  account_id       uuid not null references accounts (id) on delete cascade,
  status           text not null default 'queued' check (status in ('queued', 'running', 'completed', 'failed')),
  format           text not null,
  points_total     integer not null,
  points_accepted  integer not null,
  points_trimmed   integer not null,
  points_duplicate integer not null,
  points_invalid   integer not null,
  points_done      integer not null default 0,
  -- Points found already stored while persisting (a concurrent import of the same rows).
  points_skipped   integer not null default 0,
  errors_count     integer not null,
  -- The first line errors, as the preview lists them: [{line, message}].
  errors           jsonb not null,
  -- The preview's per-stat summary, and the stat ids the packed points refer to by position.
  stats            jsonb not null,
  stat_ids         uuid[] not null,
  -- Accepted points, 24 bytes each (stat position, t, value, occurrence); cleared once completed.
  payload          bytea,
  error            text,
  created_at       timestamptz not null default now(),
  started_at       timestamptz,
  finished_at      timestamptz
);
create index imports_account_idx on imports (account_id, created_at desc);
