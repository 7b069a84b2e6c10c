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
