-- Billing (docs/decisions.md §9, §14): each account's customer at the payment
-- provider and what the last sync saw of its subscription, and the provider's
-- event ids, each stored once so that a redelivered event does nothing.
-- Creates new tables; locks nothing that exists.

create table billing_customers (
  account_id          uuid primary key references accounts (id) on delete cascade,
  customer_id         text not null unique,
  -- The subscription the plan was derived from at the last sync (null: none, the account is on free).
  subscription_id     text,
  subscription_status text,
  price_id            text,
  -- past_due: the plan is kept while the provider retries the payment; shown so the user can act.
  past_due            boolean not null default false,
  current_period_end  timestamptz,
  synced_at           timestamptz,
  created_at          timestamptz not null default now()
);

create table billing_events (
  id          text primary key,
  type        text not null,
  customer_id text,
  received_at timestamptz not null default now()
);
create index billing_events_received_idx on billing_events (received_at);
