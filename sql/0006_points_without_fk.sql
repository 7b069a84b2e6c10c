-- Points and rollup_pending lose their foreign keys to stats: the per-row
-- referential-integrity trigger cost a large share of every batch insert.
-- Integrity is kept once per batch instead: the persist transaction locks its
-- stats FOR KEY SHARE (a concurrent delete waits for it) and inserts only
-- points of stats that still exist; deleting a stat deletes its points and
-- pending rollups explicitly. Takes a brief ACCESS EXCLUSIVE lock on both tables.
alter table points drop constraint if exists points_stat_id_fkey;
alter table rollup_pending drop constraint if exists rollup_pending_stat_id_fkey;
