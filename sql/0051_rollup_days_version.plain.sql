-- A day blob's version (docs/decisions.md §D-7): a number no other blob ever had. A blob is never changed in place
-- (a write deletes it, the builder inserts a new one), so a reader that holds a day's buckets decoded from one
-- version (shared/stats/day-cache.ts) may use them wherever a statement finds that version still there, and the
-- statement need not send the blob again. The primary key carries the version, so that finding which held days are
-- still there reads the index alone (a month of 50 stats: 1,550 index entries rather than their heap rows).
alter table rollup_days add column version bigint generated always as identity;
alter table rollup_days drop constraint rollup_days_pkey, add primary key (stat_id, size, day) include (version);
