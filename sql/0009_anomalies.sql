-- Anomaly detection (docs/decisions.md §I-3.3, §I-4.7; §11): the
-- detector state the sweep keeps per stat, the incidents it finds, and when
-- sweeps ran (per sweep and per account). Creates new tables; locks nothing that exists.

create table anomaly_state (
  stat_id          uuid primary key references stats (id) on delete cascade,
  account_id       uuid not null references accounts (id) on delete cascade,
  -- The newest complete hour the detector has stepped; the next sweep starts after it.
  last_hour        timestamptz,
  -- When a sweep last reached the stat (scored or declined), and when it last scored it.
  reached_at       timestamptz,
  evaluated_at     timestamptz,
  state            text check (state in ('evaluated', 'skipped')),
  reason           text check (reason in ('tier', 'no_rollup', 'stale', 'no_signal', 'short')),
  -- The window baseline's verdict on the last hour scored.
  window_verdict   text check (window_verdict in ('used', 'short', 'no_signal')),
  window_samples   integer,
  last_detected_at timestamptz,
  -- What the detector said about the last hour it scored, in numbers.
  last_explanation text,
  -- The whole detector state (shared/anomalies/detector.ts DetectorState): streaming baseline, open incident, re-seed point.
  detector         jsonb
);
create index anomaly_state_account_idx on anomaly_state (account_id);

create table anomalies (
  id          uuid primary key default gen_random_uuid(),
  account_id  uuid not null references accounts (id) on delete cascade,
  stat_id     uuid not null references stats (id) on delete cascade,
  detector    text not null check (detector in ('window', 'streaming', 'both')),
  direction   text not null check (direction in ('spike', 'dip')),
  status      text not null check (status in ('open', 'closed')),
  level_shift boolean not null default false,
  started_at  timestamptz not null,
  ended_at    timestamptz,
  -- {t, observed, expected, lower, upper, score} of the hour furthest out.
  peak        jsonb not null,
  explanation text not null,
  -- A stat's incident is its start hour: a sweep that runs twice records it once.
  unique (stat_id, started_at)
);
create index anomalies_account_started_idx on anomalies (account_id, started_at desc);

create table anomaly_sweeps (
  id           bigserial primary key,
  started_at   timestamptz not null,
  finished_at  timestamptz,
  stats_reached integer not null default 0,
  hours_scored integer not null default 0
);
create index anomaly_sweeps_finished_idx on anomaly_sweeps (finished_at);

create table anomaly_account_sweeps (
  account_id uuid primary key references accounts (id) on delete cascade,
  swept_at   timestamptz not null
);
