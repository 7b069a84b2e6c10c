-- Dashboards (docs/decisions.md §17): named lists of cards, each card one chart of 1 to 5 of the
-- account's stats. Cards are kept as one jsonb array in order ([{id, title, stats: [name], range}]):
-- they are always read and written whole (PATCH replaces the array), never queried one by one.
-- Stats are named, as alerts name them; deleting a stat takes its name out of the cards (shared/dashboards).
create table dashboards (
  id         uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  name       text not null check (length(name) between 1 and 100),
  -- The range the whole dashboard is drawn over; a card's own range, when set, overrides it.
  range      text not null default '24h',
  cards      jsonb not null default '[]'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index dashboards_account on dashboards (account_id, created_at);
