-- Marks left by writes that may land behind the compaction's hot edge (docs/decisions.md §27).
--
-- Most passes of a live service have nothing to do: the edge moves by an hour and the job runs every 5 minutes.
-- Finding that out cost a statement that probes every stat's oldest row and the day's small blocks (0.8 ms of
-- PostgreSQL CPU a pass, a sixth of the steady state's cost a point at 4 points a second, bench:hotwindow). A
-- process that has checked at an edge needs to check again only when the edge moves or a write may have put rows
-- or blocks behind it: such a write (a late point, a write block of a past day, an import) adds a row here in its
-- own statement, and the next pass takes the rows (DELETE ... RETURNING: only committed ones, so a mark is never
-- taken before the rows it stands for can be seen) and checks. Insert-only for writers: no row they contend on.
create table compaction_marks (at timestamptz not null default now());
