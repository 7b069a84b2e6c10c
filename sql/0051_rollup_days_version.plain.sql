-- A day blob's version (docs/decisions.md §D-7): a number no other blob ever had. A blob is never changed in place
-- (a write deletes it, the builder inserts a new one), so a reader that holds a day's buckets decoded from one
-- version (shared/stats/day-cache.ts) may use them wherever a statement finds that version still there, and the
-- statement need not send the blob again.
alter table rollup_days add column version bigint generated always as identity;
