-- The account's clock: an IANA zone the pages draw axes in and the question box reads
-- "today" and "last Monday" in. Null means "the browser's own zone"; the API checks the name against the
-- runtime's zone list (zod), the column only bounds its length, since that list changes with tzdata.
alter table accounts add column time_zone text check (time_zone is null or length(time_zone) between 1 and 64);
