-- A stat's unit and which way is good: the unit is shown on axes and beside numbers
-- (the predecessor's export carries one per stat, imported here); higher_is says whether a rise is good
-- news ('better'), bad news ('worse', latency) or neither, and colours the change figures by it.
alter table stats add column unit text check (unit is null or length(unit) between 1 and 20);
alter table stats add column higher_is text not null default 'neither' check (higher_is in ('better', 'worse', 'neither'));
