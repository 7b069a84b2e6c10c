-- Imports' packed points are stored uncompressed: pglz took about
-- as long to compress a 500,000-point payload (12 MB) as the rest of storing
-- it, and the payload lives only until its import completes. Affects rows
-- written from now on; a brief lock on imports (a small table).

alter table imports alter column payload set storage external;
