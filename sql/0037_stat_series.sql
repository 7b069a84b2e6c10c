-- Tags (docs/decisions.md §24): a series is a stat plus one tag set. A tagged series is a hidden row of
-- stats under its stat (parent_id, tags), so points, rollups, sketches, blocks, compaction and retention,
-- all keyed by stat_id, work per series unchanged; the stat row itself is the untagged series and keeps
-- kind, description, unit and direction. Deleting a stat deletes its series (on delete cascade).
-- Brief locks only: two nullable columns (no rewrite) and indexes on the stats table, which is small.
alter table stats add column parent_id uuid references stats (id) on delete cascade;
-- The tag set as a jsonb object: jsonb compares objects by content, so {"a":..,"b":..} is one set whichever order it came in.
alter table stats add column tags jsonb;
alter table stats add constraint stats_series_tags_check check ((parent_id is null) = (tags is null));
-- A stat's name is unique among stats; its series share it.
alter table stats drop constraint stats_account_id_name_key;
create unique index stats_account_id_name_key on stats (account_id, name) where parent_id is null;
create unique index stats_series_key on stats (parent_id, tags) where parent_id is not null;
create index stats_series_name_idx on stats (account_id, name) where parent_id is not null;

-- Alerts per group (docs/decisions.md §24): an alert may keep only the series matching `filter` and judge each
-- value of the tag `group_by` on its own. Each group's state machine lives in alert_groups, one row per group.
alter table alerts add column filter jsonb;
alter table alerts add column group_by text check (group_by ~ '^[a-z][a-z0-9_.-]{0,63}$');
create table alert_groups (
  alert_id          uuid not null references alerts (id) on delete cascade,
  tags              jsonb not null,
  state             text not null default 'ok' check (state in ('ok', 'firing')),
  incident_id       uuid,
  incident_notified boolean not null default false,
  last_notified_at  timestamptz,
  condition_since   timestamptz,
  incident_muted    boolean not null default false,
  resolve_withheld  uuid,
  last_value        double precision,
  last_evaluated_at timestamptz,
  primary key (alert_id, tags)
);
