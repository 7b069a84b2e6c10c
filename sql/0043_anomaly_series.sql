-- The series that carry an incident (docs/decisions.md §24, §D-W): for a stat with tagged series, the series whose
-- departure makes up the incident, largest share first ([{"tags": {"host": "web1"}, "share": 0.92}]); null for a
-- stat without tagged series. Written by the sweep with the incident.
alter table anomalies add column series jsonb;
