-- An alert's history also records what was changed by hand: a PATCH of its threshold,
-- window, side, cooldown, target or on_no_data leaves a "changed" line saying what went from what to what.
alter table alert_events drop constraint alert_events_event_check;
alter table alert_events add constraint alert_events_event_check check (event in ('fired', 'resolved', 'suppressed', 'muted', 'test', 'changed'));
