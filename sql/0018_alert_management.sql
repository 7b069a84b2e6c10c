-- Alert management (docs/decisions.md §18): mutes, what a threshold alert
-- does when its stat goes quiet, test deliveries, and each alert's history
-- (its events and every delivery attempt with the receiver's answer).
-- Adds columns with constant defaults to alerts (no rewrite) and widens one
-- check on alert_deliveries: brief ACCESS EXCLUSIVE locks on both; the rest
-- are new tables.

alter table alerts add column muted_until timestamptz;
-- window_minutes was given (not the default): only then is it also the on_no_data silence, else 60 minutes.
alter table alerts add column window_minutes_set boolean not null default false;
alter table alerts add column on_no_data text not null default 'keep' check (on_no_data in ('keep', 'resolve', 'alert'));
-- The open incident's fire was withheld by a mute: delivered when the mute ends while the breach lasts.
alter table alerts add column incident_muted boolean not null default false;
-- An incident whose fire was delivered and whose resolve a mute withheld: the resolve goes when the mute ends.
alter table alerts add column resolve_withheld uuid;
-- The open incident was opened by silence (on_no_data = alert), so its messages speak of missing data.
alter table alerts add column incident_no_data boolean not null default false;

alter table alert_deliveries drop constraint alert_deliveries_event_check;
alter table alert_deliveries add constraint alert_deliveries_event_check check (event in ('fired', 'resolved', 'test'));

-- What happened to an alert, newest read first: one row per transition (delivered, suppressed by the
-- cooldown or withheld by a mute), per test, and per mute set. delivery_id links a row to its delivery.
create table alert_events (
  id             bigint generated always as identity primary key,
  alert_id       uuid not null references alerts (id) on delete cascade,
  at             timestamptz not null,
  event          text not null check (event in ('fired', 'resolved', 'suppressed', 'muted', 'test')),
  observed_value double precision,
  detail         text,
  delivery_id    text references alert_deliveries (id) on delete set null
);
create index alert_events_alert_idx on alert_events (alert_id, at desc, id desc);

-- Every try of a delivery and what came back (status code, or the error when nothing did).
create table alert_delivery_attempts (
  delivery_id text not null references alert_deliveries (id) on delete cascade,
  attempt     integer not null,
  at          timestamptz not null default now(),
  status_code integer,
  error       text,
  primary key (delivery_id, attempt)
);

-- The deliveries made before this history existed become its first events.
insert into alert_events (alert_id, at, event, observed_value, delivery_id)
select alert_id, created_at, event, (payload->>'observed_value')::float8, id from alert_deliveries order by created_at;
