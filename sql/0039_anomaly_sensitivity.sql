-- Anomaly sensitivity per stat (docs/decisions.md §16): low, normal (the default) or high, the number of
-- spreads from expected an hour must be to be flagged (5, 4, 3). The sweep and the back-test read it.
alter table stats add column anomaly_sensitivity text not null default 'normal'
  constraint stats_anomaly_sensitivity_check check (anomaly_sensitivity in ('low', 'normal', 'high'));

-- An anomaly alert's own sensitivity (null: the stat's). It fires on the stat's incidents whose peak is at least
-- that many spreads out, so an alert can be quieter than its stat's list, never louder.
alter table alerts add column anomaly_sensitivity text
  constraint alerts_anomaly_sensitivity_check check (anomaly_sensitivity in ('low', 'normal', 'high'));
