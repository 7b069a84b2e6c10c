-- Minute sketches of dense gauges: charts with buckets under an hour (1h, 6h, 24h) read raw
-- points exactly, which for a gauge of millions of points a day is a sort of millions of rows a read (10
-- percentiles over 24 h of a 4M-point gauge: 2.4-5.4 s). An hour with at least 3,600 points (one a second) gets
-- a sketch per minute beside its hour sketch, built from the same points by the same refresh, and those buckets
-- merge minute sketches instead (within the sketch's 1 %). Sparser hours keep none: their raw points are fewer
-- bytes than sketches and are read exactly (sql/0023's reasoning). All or none of an hour's minutes are written,
-- in one transaction, so an hour holding any minute sketch has them all.
create table sketches_1m (like sketches_1h including all);
alter table sketches_1m add foreign key (stat_id) references stats (id) on delete cascade;
