-- Alerts (docs/decisions.md §I-2.4, §I-2.5, §I-3.2; §8): the rules, their
-- evaluation state, the outbox of deliveries, and e-mail double opt-in.
-- Creates new tables; locks nothing that exists.

create table alerts (
  id               uuid primary key default gen_random_uuid(),
  account_id       uuid not null references accounts (id) on delete cascade,
  -- By name, not id: an alert outlives a delete and re-creation of its stat.
  stat_name        text not null,
  condition_type   text not null check (condition_type in ('above', 'below', 'pct_change', 'heartbeat', 'missing_data', 'sustained')),
  threshold        double precision not null,
  window_minutes   integer not null check (window_minutes between 1 and 10080),
  direction        text not null default 'above' check (direction in ('above', 'below')),
  channel          text not null check (channel in ('webhook', 'slack', 'email')),
  channel_config   jsonb not null,
  cooldown_minutes integer not null default 0 check (cooldown_minutes between 0 and 10080),
  -- Needed in clear to sign deliveries (HMAC); shown once at creation.
  signing_secret   text not null,
  state            text not null default 'ok' check (state in ('ok', 'firing', 'pending_confirmation')),
  -- The open incident while firing, and whether its fire was delivered (a fire suppressed by cooldown resolves silently).
  incident_id      uuid,
  incident_notified boolean not null default false,
  last_notified_at timestamptz,
  -- For `sustained`: since when the condition has held without a break.
  condition_since  timestamptz,
  last_value       double precision,
  last_evaluated_at timestamptz,
  last_delivery_error text,
  last_delivery_failed_at timestamptz,
  created_at       timestamptz not null default now()
);
create index alerts_account_idx on alerts (account_id);

-- The outbox: one row per delivery; its id is the idempotency key the receiver dedups on.
create table alert_deliveries (
  id           text primary key,
  alert_id     uuid not null references alerts (id) on delete cascade,
  incident_id  uuid not null,
  event        text not null check (event in ('fired', 'resolved')),
  payload      jsonb not null,
  status       text not null default 'queued' check (status in ('queued', 'delivered', 'failed')),
  attempts     integer not null default 0,
  last_error   text,
  created_at   timestamptz not null default now(),
  delivered_at timestamptz
);
create index alert_deliveries_alert_idx on alert_deliveries (alert_id, created_at desc);
create index alert_deliveries_queued_idx on alert_deliveries (created_at) where status = 'queued';

-- E-mail double opt-in: nothing is mailed to an address until its owner clicked the link.
create table email_confirmations (
  account_id   uuid not null references accounts (id) on delete cascade,
  email        text not null,
  token_hash   bytea not null unique,
  created_at   timestamptz not null default now(),
  confirmed_at timestamptz,
  primary key (account_id, email)
);
