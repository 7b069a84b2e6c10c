-- The schema as the migrations in sql/ leave it on plain PostgreSQL (no TimescaleDB), for reading:
-- the migrations remain the only thing that changes a database. Generated, do not edit: after adding
-- or changing a migration, regenerate it with `npx tsx dev/schema-dump.ts` (pg_dump 15, --schema-only).

--
-- PostgreSQL database dump
--

--
-- Name: point_block_decode(timestamp with time zone, integer[], double precision, bigint[], double precision[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.point_block_decode(p_day timestamp with time zone, p_dts integer[], p_scale double precision, p_ivals bigint[], p_fvals double precision[]) RETURNS TABLE(ts timestamp with time zone, value double precision)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select p_day + (sum(u.dt) over w)::float8 * interval '1 second',
         case when p_scale is null then u.fv else (point_delta_sum(u.iv) over w)::float8 / p_scale end
  from unnest(p_dts, p_ivals, p_fvals) with ordinality as u(dt, iv, fv, o)
  window w as (order by u.o rows unbounded preceding)
$$;


--
-- Name: point_block_encode(timestamp with time zone, timestamp with time zone[], double precision[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.point_block_encode(p_day timestamp with time zone, p_ts timestamp with time zone[], p_vals double precision[]) RETURNS TABLE(n integer, first_ts timestamp with time zone, last_ts timestamp with time zone, dts integer[], scale double precision, ivals bigint[], fvals double precision[])
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  with p as (select t, v, o from unnest(p_ts, p_vals) with ordinality as u(t, v, o)),
  k as (
    select case
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 0) / 10::float8 ^ 0 = v) from p) then 10::float8 ^ 0
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 1) / 10::float8 ^ 1 = v) from p) then 10::float8 ^ 1
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 2) / 10::float8 ^ 2 = v) from p) then 10::float8 ^ 2
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 3) / 10::float8 ^ 3 = v) from p) then 10::float8 ^ 3
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 4) / 10::float8 ^ 4 = v) from p) then 10::float8 ^ 4
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 5) / 10::float8 ^ 5 = v) from p) then 10::float8 ^ 5
      when (select bool_and(abs(v) < 1e12 and round(v * 10::float8 ^ 6) / 10::float8 ^ 6 = v) from p) then 10::float8 ^ 6
    end as scale
  ),
  q as (
    select p.t, p.v, p.o, k.scale,
           date_part('epoch', p.t - coalesce(lag(p.t) over w, p_day))::int4 as dt,
           round(p.v * k.scale)::int8 - coalesce(lag(round(p.v * k.scale)::int8) over w, 0) as dv
    from p, k window w as (order by p.t, p.o)
  )
  select count(*)::int, min(t), max(t), array_agg(dt order by t, o), (select scale from k),
         array_agg(dv order by t, o) filter (where scale is not null),
         array_agg(v order by t, o) filter (where scale is null)
  from q
$$;


--
-- Name: point_blocks_append(uuid, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.point_blocks_append(p_stat uuid, p_day timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    AS $$
declare
  r record;
  k integer := 0;
  merged integer := 0;
  small bigint[] := '{}';
  base_seq bigint;
  n_all integer;
  first_at timestamptz;
  last_at timestamptz;
  sc float8;
  last_scaled int8;
  d_head int4[];
  i_head int8[];
  f_head float8[];
  d_tail int4[] := '{}';
  i_tail int8[] := '{}';
  f_tail float8[] := '{}';
  d int4[];
  iv int8[];
begin
  for r in
    select seq, n, first_ts, last_ts, dts, scale, ivals, fvals from point_blocks
    where stat_id = p_stat and day = p_day order by seq <> 0, first_ts, seq
  loop
    k := k + 1;
    if r.seq <> 0 then
      small := small || r.seq;
      merged := merged + r.n;
    end if;
    if k = 1 then
      base_seq := r.seq;
      n_all := r.n;
      first_at := r.first_ts;
      sc := r.scale;
      d_head := r.dts;
      i_head := r.ivals;
      f_head := r.fvals;
    else
      if r.first_ts <= last_at or r.scale is distinct from sc then
        return null;
      end if;
      n_all := n_all + r.n;
      d := r.dts;
      d[1] := d[1] - extract(epoch from last_at - p_day)::int4;
      d_tail := d_tail || d;
      if sc is null then
        f_tail := f_tail || r.fvals;
      else
        -- The previous part's last scaled value: the sum of its deltas (its first is from 0), in int8 (point_delta_sum).
        if last_scaled is null then
          select point_delta_sum(x) into last_scaled from unnest(i_head) as u(x);
        end if;
        iv := r.ivals;
        iv[1] := iv[1] - last_scaled;
        i_tail := i_tail || iv;
        select point_delta_sum(x) into last_scaled from unnest(r.ivals) as u(x);
      end if;
    end if;
    last_at := r.last_ts;
  end loop;
  if k = 0 or (k = 1 and base_seq = 0) then
    return 0;
  end if;
  if k = 1 then
    -- One small block and no block 0: it becomes block 0 as it is (its compressed arrays are kept).
    update point_blocks set seq = 0 where stat_id = p_stat and day = p_day and seq = base_seq;
    return merged;
  end if;
  delete from point_blocks where stat_id = p_stat and day = p_day and seq = any(small);
  insert into point_blocks (stat_id, day, seq, n, first_ts, last_ts, dts, scale, ivals, fvals)
  values (p_stat, p_day, 0, n_all, first_at, last_at, d_head || d_tail, sc,
          case when sc is null then null else i_head || i_tail end,
          case when sc is null then f_head || f_tail end)
  on conflict (stat_id, day, seq) do update set n = excluded.n, first_ts = excluded.first_ts, last_ts = excluded.last_ts,
    dts = excluded.dts, scale = excluded.scale, ivals = excluded.ivals, fvals = excluded.fvals;
  return merged;
end
$$;


--
-- Name: rollup_days_drop(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rollup_days_drop() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
declare
  listed_size int := tg_argv[0]::int;
  listed_stats uuid[];
  listed_days timestamptz[];
begin
  -- A stat's delete (cascaded here): its days come off the list, and none is listed again.
  if tg_op = 'DELETE' then
    delete from rollup_days_pending p using (select distinct stat_id from changed) c
    where p.stat_id = c.stat_id and not exists (select 1 from stats s where s.id = c.stat_id);
  end if;
  with listed as (
    insert into rollup_days_pending as p (stat_id, size, day)
    select distinct stat_id, listed_size, date_bin('1 day', bucket, timestamptz '2000-01-01 00:00:00+00') from changed
    where tg_op <> 'DELETE' or exists (select 1 from stats s where s.id = changed.stat_id) order by 1, 3
    on conflict (stat_id, size, day) do update set day = excluded.day where false
    returning stat_id, day
  )
  select array_agg(stat_id), array_agg(day) into listed_stats, listed_days from listed;
  if listed_stats is not null then
    delete from rollup_days d using unnest(listed_stats, listed_days) as c(stat_id, day)
    where d.stat_id = c.stat_id and d.size = listed_size and d.day = c.day;
  end if;
  return null;
end
$$;


--
-- Name: rollups_5m_add(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rollups_5m_add() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  insert into rollups_5m as r (stat_id, bucket, count, sum, min, max)
  select stat_id, date_bin('5 minutes', bucket, timestamptz '2000-01-01 00:00:00+00'), sum(count), sum(sum), min(min), max(max)
  from added group by 1, 2 order by 1, 2
  on conflict (stat_id, bucket) do update set count = r.count + excluded.count, sum = r.sum + excluded.sum,
    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max);
  return null;
end
$$;


--
-- Name: rollups_5m_merge(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rollups_5m_merge() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  insert into rollups_5m as r (stat_id, bucket, count, sum, min, max)
  select n.stat_id, date_bin('5 minutes', n.bucket, timestamptz '2000-01-01 00:00:00+00'), sum(n.count - o.count), sum(n.sum - o.sum),
    min(n.min), max(n.max)
  from merged n join unmerged o using (stat_id, bucket) group by 1, 2 order by 1, 2
  on conflict (stat_id, bucket) do update set count = r.count + excluded.count, sum = r.sum + excluded.sum,
    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max);
  return null;
end
$$;


--
-- Name: stat_newest(uuid, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.stat_newest(p_stat uuid, p_from timestamp with time zone, p_to timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select greatest(h.m, (
    select max(case when b.last_ts < p_to then b.last_ts else (
      select max(d.ts) from point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d where d.ts >= p_from and d.ts < p_to) end)
    from point_blocks b
    where b.stat_id = p_stat and b.first_ts < p_to and b.last_ts >= p_from and b.last_ts > coalesce(h.m, '-infinity')
      and b.day = (
        select n.day from point_blocks n
        where n.stat_id = p_stat and n.day < p_to and n.first_ts < p_to and n.last_ts >= p_from and n.last_ts > coalesce(h.m, '-infinity')
        order by n.day desc limit 1)))
  from (select max(p.ts) as m from points p where p.stat_id = p_stat and p.ts >= p_from and p.ts < p_to) h
$$;


--
-- Name: stat_points(uuid, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.stat_points(p_stat uuid, p_from timestamp with time zone, p_to timestamp with time zone) RETURNS TABLE(ts timestamp with time zone, value double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select p.ts, p.value from points p where p.stat_id = p_stat and p.ts >= p_from and p.ts < p_to
  union all
  select d.ts, d.value
  from point_blocks b cross join lateral point_block_decode(b.day, b.dts, b.scale, b.ivals, b.fvals) d
  where b.stat_id = p_stat and b.day < p_to and b.day + interval '1 day' > p_from
    and b.last_ts >= p_from and b.first_ts < p_to and d.ts >= p_from and d.ts < p_to
$$;


--
-- Name: point_delta_sum(bigint); Type: AGGREGATE; Schema: public; Owner: -
--

CREATE AGGREGATE public.point_delta_sum(bigint) (
    SFUNC = int8pl,
    STYPE = bigint,
    INITCOND = '0',
    PARALLEL = safe
);


--
-- Name: accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accounts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    password_hash text,
    plan text DEFAULT 'free'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    free_slot_claimed_at timestamp with time zone,
    totp_secret text,
    totp_pending_secret text,
    totp_enabled_at timestamp with time zone,
    totp_last_step bigint,
    time_zone text,
    totp_failures integer DEFAULT 0 NOT NULL,
    totp_locked_at timestamp with time zone,
    last_sign_in_at timestamp with time zone,
    CONSTRAINT accounts_plan_check CHECK ((plan = ANY (ARRAY['free'::text, 'starter'::text, 'pro'::text, 'business'::text]))),
    CONSTRAINT accounts_time_zone_check CHECK (((time_zone IS NULL) OR ((length(time_zone) >= 1) AND (length(time_zone) <= 64))))
);


--
-- Name: alert_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert_deliveries (
    id text NOT NULL,
    alert_id uuid NOT NULL,
    incident_id uuid NOT NULL,
    event text NOT NULL,
    payload jsonb NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    delivered_at timestamp with time zone,
    CONSTRAINT alert_deliveries_event_check CHECK ((event = ANY (ARRAY['fired'::text, 'resolved'::text, 'test'::text]))),
    CONSTRAINT alert_deliveries_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'delivered'::text, 'failed'::text])))
);


--
-- Name: alert_delivery_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert_delivery_attempts (
    delivery_id text NOT NULL,
    attempt integer NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    status_code integer,
    error text
);


--
-- Name: alert_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert_events (
    id bigint NOT NULL,
    alert_id uuid NOT NULL,
    at timestamp with time zone NOT NULL,
    event text NOT NULL,
    observed_value double precision,
    detail text,
    delivery_id text,
    CONSTRAINT alert_events_event_check CHECK ((event = ANY (ARRAY['fired'::text, 'resolved'::text, 'suppressed'::text, 'muted'::text, 'test'::text, 'changed'::text])))
);


--
-- Name: alert_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.alert_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.alert_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: alert_groups; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert_groups (
    alert_id uuid NOT NULL,
    tags jsonb NOT NULL,
    state text DEFAULT 'ok'::text NOT NULL,
    incident_id uuid,
    incident_notified boolean DEFAULT false NOT NULL,
    last_notified_at timestamp with time zone,
    condition_since timestamp with time zone,
    incident_muted boolean DEFAULT false NOT NULL,
    resolve_withheld uuid,
    last_value double precision,
    last_evaluated_at timestamp with time zone,
    CONSTRAINT alert_groups_state_check CHECK ((state = ANY (ARRAY['ok'::text, 'firing'::text])))
);


--
-- Name: alerts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alerts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    stat_name text NOT NULL,
    condition_type text NOT NULL,
    threshold double precision NOT NULL,
    window_minutes integer NOT NULL,
    direction text DEFAULT 'above'::text NOT NULL,
    channel text NOT NULL,
    channel_config jsonb NOT NULL,
    cooldown_minutes integer DEFAULT 0 NOT NULL,
    signing_secret text NOT NULL,
    state text DEFAULT 'ok'::text NOT NULL,
    incident_id uuid,
    incident_notified boolean DEFAULT false NOT NULL,
    last_notified_at timestamp with time zone,
    condition_since timestamp with time zone,
    last_value double precision,
    last_evaluated_at timestamp with time zone,
    last_delivery_error text,
    last_delivery_failed_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    muted_until timestamp with time zone,
    window_minutes_set boolean DEFAULT false NOT NULL,
    on_no_data text DEFAULT 'keep'::text NOT NULL,
    incident_muted boolean DEFAULT false NOT NULL,
    resolve_withheld uuid,
    incident_no_data boolean DEFAULT false NOT NULL,
    aggregation text DEFAULT 'avg'::text NOT NULL,
    filter jsonb,
    group_by text,
    anomaly_sensitivity text,
    CONSTRAINT alerts_aggregation_check CHECK ((aggregation = ANY (ARRAY['avg'::text, 'p50'::text, 'p90'::text, 'p95'::text, 'p99'::text]))),
    CONSTRAINT alerts_aggregation_condition_check CHECK (((aggregation = 'avg'::text) OR (condition_type = ANY (ARRAY['above'::text, 'below'::text, 'sustained'::text])))),
    CONSTRAINT alerts_anomaly_sensitivity_check CHECK ((anomaly_sensitivity = ANY (ARRAY['low'::text, 'normal'::text, 'high'::text]))),
    CONSTRAINT alerts_channel_check CHECK ((channel = ANY (ARRAY['webhook'::text, 'slack'::text, 'email'::text, 'pagerduty'::text, 'opsgenie'::text]))),
    CONSTRAINT alerts_condition_type_check CHECK ((condition_type = ANY (ARRAY['above'::text, 'below'::text, 'pct_change'::text, 'heartbeat'::text, 'missing_data'::text, 'sustained'::text, 'anomaly'::text]))),
    CONSTRAINT alerts_cooldown_minutes_check CHECK (((cooldown_minutes >= 0) AND (cooldown_minutes <= 10080))),
    CONSTRAINT alerts_direction_check CHECK ((direction = ANY (ARRAY['above'::text, 'below'::text]))),
    CONSTRAINT alerts_group_by_check CHECK ((group_by ~ '^[a-z][a-z0-9_.-]{0,63}$'::text)),
    CONSTRAINT alerts_on_no_data_check CHECK ((on_no_data = ANY (ARRAY['keep'::text, 'resolve'::text, 'alert'::text]))),
    CONSTRAINT alerts_state_check CHECK ((state = ANY (ARRAY['ok'::text, 'firing'::text, 'pending_confirmation'::text]))),
    CONSTRAINT alerts_window_minutes_check CHECK (((window_minutes >= 1) AND (window_minutes <= 10080)))
);


--
-- Name: anomalies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.anomalies (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    stat_id uuid NOT NULL,
    detector text NOT NULL,
    direction text NOT NULL,
    status text NOT NULL,
    level_shift boolean DEFAULT false NOT NULL,
    started_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    peak jsonb NOT NULL,
    explanation text NOT NULL,
    opened_at timestamp with time zone DEFAULT now() NOT NULL,
    series jsonb,
    CONSTRAINT anomalies_detector_check CHECK ((detector = ANY (ARRAY['window'::text, 'streaming'::text, 'both'::text]))),
    CONSTRAINT anomalies_direction_check CHECK ((direction = ANY (ARRAY['spike'::text, 'dip'::text]))),
    CONSTRAINT anomalies_status_check CHECK ((status = ANY (ARRAY['open'::text, 'closed'::text])))
);


--
-- Name: anomaly_account_sweeps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.anomaly_account_sweeps (
    account_id uuid NOT NULL,
    swept_at timestamp with time zone NOT NULL
);


--
-- Name: anomaly_rescore; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.anomaly_rescore (
    stat_id uuid NOT NULL,
    from_hour timestamp with time zone NOT NULL
);


--
-- Name: anomaly_state; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.anomaly_state (
    stat_id uuid NOT NULL,
    account_id uuid NOT NULL,
    last_hour timestamp with time zone,
    reached_at timestamp with time zone,
    evaluated_at timestamp with time zone,
    state text,
    reason text,
    window_verdict text,
    window_samples integer,
    last_detected_at timestamp with time zone,
    last_explanation text,
    detector jsonb,
    CONSTRAINT anomaly_state_reason_check CHECK ((reason = ANY (ARRAY['tier'::text, 'no_rollup'::text, 'stale'::text, 'no_signal'::text, 'short'::text]))),
    CONSTRAINT anomaly_state_state_check CHECK ((state = ANY (ARRAY['evaluated'::text, 'skipped'::text]))),
    CONSTRAINT anomaly_state_window_verdict_check CHECK ((window_verdict = ANY (ARRAY['used'::text, 'short'::text, 'no_signal'::text])))
);


--
-- Name: anomaly_sweeps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.anomaly_sweeps (
    id bigint NOT NULL,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    stats_reached integer DEFAULT 0 NOT NULL,
    hours_scored integer DEFAULT 0 NOT NULL
);


--
-- Name: anomaly_sweeps_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.anomaly_sweeps_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: anomaly_sweeps_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.anomaly_sweeps_id_seq OWNED BY public.anomaly_sweeps.id;


--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    label text NOT NULL,
    prefix text NOT NULL,
    secret_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    scope text DEFAULT 'full'::text NOT NULL,
    created_by uuid,
    CONSTRAINT api_keys_label_check CHECK (((char_length(label) >= 1) AND (char_length(label) <= 100))),
    CONSTRAINT api_keys_scope_check CHECK ((scope = ANY (ARRAY['write'::text, 'read'::text, 'full'::text])))
);


--
-- Name: applied_batches; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.applied_batches (
    id text NOT NULL,
    points integer NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: audit_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_events (
    id bigint NOT NULL,
    account_id uuid NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_type text NOT NULL,
    actor_id uuid,
    actor_email text,
    action text NOT NULL,
    target text NOT NULL,
    ip text,
    summary jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT audit_events_actor_type_check CHECK ((actor_type = ANY (ARRAY['person'::text, 'key'::text, 'billing'::text])))
);


--
-- Name: audit_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.audit_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.audit_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: billing_customers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.billing_customers (
    account_id uuid NOT NULL,
    customer_id text NOT NULL,
    subscription_id text,
    subscription_status text,
    price_id text,
    past_due boolean DEFAULT false NOT NULL,
    current_period_end timestamp with time zone,
    synced_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: billing_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.billing_events (
    id text NOT NULL,
    type text NOT NULL,
    customer_id text,
    received_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: compaction_marks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.compaction_marks (
    at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: dashboards; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.dashboards (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    name text NOT NULL,
    range text DEFAULT '24h'::text NOT NULL,
    cards jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dashboards_name_check CHECK (((length(name) >= 1) AND (length(name) <= 100)))
);


--
-- Name: email_confirmations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.email_confirmations (
    account_id uuid NOT NULL,
    email text NOT NULL,
    token_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    confirmed_at timestamp with time zone
);


--
-- Name: free_tier; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.free_tier (
    id boolean DEFAULT true NOT NULL,
    claimed integer DEFAULT 0 NOT NULL,
    CONSTRAINT free_tier_id_check CHECK (id)
);


--
-- Name: imports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.imports (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    format text NOT NULL,
    points_total integer NOT NULL,
    points_accepted integer NOT NULL,
    points_trimmed integer NOT NULL,
    points_duplicate integer NOT NULL,
    points_invalid integer NOT NULL,
    points_done integer DEFAULT 0 NOT NULL,
    points_skipped integer DEFAULT 0 NOT NULL,
    errors_count integer NOT NULL,
    errors jsonb NOT NULL,
    stats jsonb NOT NULL,
    stat_ids uuid[] NOT NULL,
    payload bytea,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT imports_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'completed'::text, 'failed'::text])))
);
ALTER TABLE ONLY public.imports ALTER COLUMN payload SET STORAGE EXTERNAL;


--
-- Name: invitations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.invitations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    email text NOT NULL,
    role text NOT NULL,
    token_hash bytea NOT NULL,
    invited_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    accepted_at timestamp with time zone,
    revoked_at timestamp with time zone,
    CONSTRAINT invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text])))
);


--
-- Name: memberships; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memberships (
    account_id uuid NOT NULL,
    person_id uuid NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memberships_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text])))
);


--
-- Name: parked_points; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.parked_points (
    id bigint NOT NULL,
    batch_id text NOT NULL,
    stat_id uuid NOT NULL,
    point text NOT NULL,
    code text,
    reason text NOT NULL,
    parked_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: parked_points_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.parked_points ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.parked_points_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: password_resets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.password_resets (
    token_hash bytea NOT NULL,
    account_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);


--
-- Name: point_blocks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.point_blocks (
    stat_id uuid NOT NULL,
    day timestamp with time zone NOT NULL,
    n integer NOT NULL,
    first_ts timestamp with time zone NOT NULL,
    last_ts timestamp with time zone NOT NULL,
    dts integer[] NOT NULL,
    scale double precision,
    ivals bigint[],
    fvals double precision[],
    seq bigint DEFAULT 0 NOT NULL
)
WITH (toast_tuple_target='128');
ALTER TABLE ONLY public.point_blocks ALTER COLUMN dts SET STORAGE MAIN;
ALTER TABLE ONLY public.point_blocks ALTER COLUMN ivals SET STORAGE MAIN;
ALTER TABLE ONLY public.point_blocks ALTER COLUMN fvals SET STORAGE MAIN;


--
-- Name: point_ikeys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.point_ikeys (
    stat_id uuid NOT NULL,
    ts timestamp with time zone NOT NULL,
    ikey text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: point_write_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.point_write_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: points; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.points (
    stat_id uuid NOT NULL,
    ts timestamp with time zone NOT NULL,
    value double precision NOT NULL
);


--
-- Name: recovery_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.recovery_codes (
    account_id uuid NOT NULL,
    code_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    used_at timestamp with time zone
);


--
-- Name: rollup_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollup_days (
    stat_id uuid NOT NULL,
    size integer NOT NULL,
    day timestamp with time zone NOT NULL,
    buckets bytea NOT NULL,
    version bigint NOT NULL
);
ALTER TABLE ONLY public.rollup_days ALTER COLUMN buckets SET STORAGE EXTERNAL;


--
-- Name: rollup_days_pending; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollup_days_pending (
    stat_id uuid NOT NULL,
    size integer NOT NULL,
    day timestamp with time zone NOT NULL
);


--
-- Name: rollup_days_version_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.rollup_days ALTER COLUMN version ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.rollup_days_version_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: rollup_pending; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollup_pending (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    count bigint NOT NULL,
    sum double precision NOT NULL,
    min double precision NOT NULL,
    max double precision NOT NULL
);


--
-- Name: rollup_state; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollup_state (
    stat_id uuid NOT NULL,
    refreshed_at timestamp with time zone NOT NULL
);


--
-- Name: rollups_1d; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollups_1d (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    count bigint NOT NULL,
    sum double precision NOT NULL,
    min double precision NOT NULL,
    max double precision NOT NULL
);


--
-- Name: rollups_1h; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollups_1h (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    count bigint NOT NULL,
    sum double precision NOT NULL,
    min double precision NOT NULL,
    max double precision NOT NULL
);


--
-- Name: rollups_1m; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollups_1m (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    count bigint NOT NULL,
    sum double precision NOT NULL,
    min double precision NOT NULL,
    max double precision NOT NULL
);


--
-- Name: rollups_5m; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollups_5m (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    count bigint NOT NULL,
    sum double precision NOT NULL,
    min double precision NOT NULL,
    max double precision NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version text NOT NULL,
    file text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    csrf_token text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    active_account_id uuid
);


--
-- Name: sketch_dirty; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sketch_dirty (
    stat_id uuid NOT NULL,
    hour timestamp with time zone NOT NULL
);


--
-- Name: sketches_1d; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sketches_1d (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    sketch bytea NOT NULL
);


--
-- Name: sketches_1h; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sketches_1h (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    sketch bytea NOT NULL
);


--
-- Name: sketches_1m; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sketches_1m (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    sketch bytea NOT NULL
);


--
-- Name: sketches_6h; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sketches_6h (
    stat_id uuid NOT NULL,
    bucket timestamp with time zone NOT NULL,
    sketch bytea NOT NULL
);


--
-- Name: stat_shares; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stat_shares (
    stat_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stats (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    name text NOT NULL,
    kind text NOT NULL,
    description text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    unit text,
    higher_is text DEFAULT 'neither'::text NOT NULL,
    parent_id uuid,
    tags jsonb,
    anomaly_sensitivity text DEFAULT 'normal'::text NOT NULL,
    CONSTRAINT stats_anomaly_sensitivity_check CHECK ((anomaly_sensitivity = ANY (ARRAY['low'::text, 'normal'::text, 'high'::text]))),
    CONSTRAINT stats_description_check CHECK ((char_length(description) <= 500)),
    CONSTRAINT stats_higher_is_check CHECK ((higher_is = ANY (ARRAY['better'::text, 'worse'::text, 'neither'::text]))),
    CONSTRAINT stats_kind_check CHECK ((kind = ANY (ARRAY['counter'::text, 'gauge'::text]))),
    CONSTRAINT stats_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 128))),
    CONSTRAINT stats_series_tags_check CHECK (((parent_id IS NULL) = (tags IS NULL))),
    CONSTRAINT stats_unit_check CHECK (((unit IS NULL) OR ((length(unit) >= 1) AND (length(unit) <= 20))))
);


--
-- Name: totp_steps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.totp_steps (
    account_id uuid NOT NULL,
    purpose text NOT NULL,
    step bigint NOT NULL,
    CONSTRAINT totp_steps_purpose_check CHECK ((purpose = ANY (ARRAY['sign-in'::text, 'manage'::text, 'delete'::text])))
);


--
-- Name: anomaly_sweeps id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_sweeps ALTER COLUMN id SET DEFAULT nextval('public.anomaly_sweeps_id_seq'::regclass);


--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);


--
-- Name: alert_deliveries alert_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_deliveries
    ADD CONSTRAINT alert_deliveries_pkey PRIMARY KEY (id);


--
-- Name: alert_delivery_attempts alert_delivery_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_delivery_attempts
    ADD CONSTRAINT alert_delivery_attempts_pkey PRIMARY KEY (delivery_id, attempt);


--
-- Name: alert_events alert_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_events
    ADD CONSTRAINT alert_events_pkey PRIMARY KEY (id);


--
-- Name: alert_groups alert_groups_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_groups
    ADD CONSTRAINT alert_groups_pkey PRIMARY KEY (alert_id, tags);


--
-- Name: alerts alerts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alerts
    ADD CONSTRAINT alerts_pkey PRIMARY KEY (id);


--
-- Name: anomalies anomalies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomalies
    ADD CONSTRAINT anomalies_pkey PRIMARY KEY (id);


--
-- Name: anomalies anomalies_stat_id_started_at_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomalies
    ADD CONSTRAINT anomalies_stat_id_started_at_key UNIQUE (stat_id, started_at);


--
-- Name: anomaly_account_sweeps anomaly_account_sweeps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_account_sweeps
    ADD CONSTRAINT anomaly_account_sweeps_pkey PRIMARY KEY (account_id);


--
-- Name: anomaly_rescore anomaly_rescore_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_rescore
    ADD CONSTRAINT anomaly_rescore_pkey PRIMARY KEY (stat_id);


--
-- Name: anomaly_state anomaly_state_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_state
    ADD CONSTRAINT anomaly_state_pkey PRIMARY KEY (stat_id);


--
-- Name: anomaly_sweeps anomaly_sweeps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_sweeps
    ADD CONSTRAINT anomaly_sweeps_pkey PRIMARY KEY (id);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: api_keys api_keys_prefix_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_prefix_key UNIQUE (prefix);


--
-- Name: applied_batches applied_batches_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.applied_batches
    ADD CONSTRAINT applied_batches_pkey PRIMARY KEY (id);


--
-- Name: audit_events audit_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_pkey PRIMARY KEY (id);


--
-- Name: billing_customers billing_customers_customer_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.billing_customers
    ADD CONSTRAINT billing_customers_customer_id_key UNIQUE (customer_id);


--
-- Name: billing_customers billing_customers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.billing_customers
    ADD CONSTRAINT billing_customers_pkey PRIMARY KEY (account_id);


--
-- Name: billing_events billing_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.billing_events
    ADD CONSTRAINT billing_events_pkey PRIMARY KEY (id);


--
-- Name: dashboards dashboards_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dashboards
    ADD CONSTRAINT dashboards_pkey PRIMARY KEY (id);


--
-- Name: email_confirmations email_confirmations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.email_confirmations
    ADD CONSTRAINT email_confirmations_pkey PRIMARY KEY (account_id, email);


--
-- Name: email_confirmations email_confirmations_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.email_confirmations
    ADD CONSTRAINT email_confirmations_token_hash_key UNIQUE (token_hash);


--
-- Name: free_tier free_tier_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.free_tier
    ADD CONSTRAINT free_tier_pkey PRIMARY KEY (id);


--
-- Name: imports imports_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT imports_pkey PRIMARY KEY (id);


--
-- Name: invitations invitations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_pkey PRIMARY KEY (id);


--
-- Name: invitations invitations_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_token_hash_key UNIQUE (token_hash);


--
-- Name: memberships memberships_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_pkey PRIMARY KEY (account_id, person_id);


--
-- Name: parked_points parked_points_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.parked_points
    ADD CONSTRAINT parked_points_pkey PRIMARY KEY (id);


--
-- Name: password_resets password_resets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_resets
    ADD CONSTRAINT password_resets_pkey PRIMARY KEY (token_hash);


--
-- Name: point_blocks point_blocks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.point_blocks
    ADD CONSTRAINT point_blocks_pkey PRIMARY KEY (stat_id, day, seq);


--
-- Name: point_ikeys point_ikeys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.point_ikeys
    ADD CONSTRAINT point_ikeys_pkey PRIMARY KEY (stat_id, ts, ikey);


--
-- Name: recovery_codes recovery_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recovery_codes
    ADD CONSTRAINT recovery_codes_pkey PRIMARY KEY (account_id, code_hash);


--
-- Name: rollup_days_pending rollup_days_pending_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollup_days_pending
    ADD CONSTRAINT rollup_days_pending_pkey PRIMARY KEY (stat_id, size, day);


--
-- Name: rollup_days rollup_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollup_days
    ADD CONSTRAINT rollup_days_pkey PRIMARY KEY (stat_id, size, day) INCLUDE (version);


--
-- Name: rollup_state rollup_state_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollup_state
    ADD CONSTRAINT rollup_state_pkey PRIMARY KEY (stat_id);


--
-- Name: rollups_1d rollups_1d_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_1d
    ADD CONSTRAINT rollups_1d_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: rollups_1h rollups_1h_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_1h
    ADD CONSTRAINT rollups_1h_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: rollups_1m rollups_1m_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_1m
    ADD CONSTRAINT rollups_1m_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: rollups_5m rollups_5m_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_5m
    ADD CONSTRAINT rollups_5m_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: sessions sessions_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_token_hash_key UNIQUE (token_hash);


--
-- Name: sketch_dirty sketch_dirty_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketch_dirty
    ADD CONSTRAINT sketch_dirty_pkey PRIMARY KEY (stat_id, hour);


--
-- Name: sketches_1d sketches_1d_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_1d
    ADD CONSTRAINT sketches_1d_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: sketches_1h sketches_1h_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_1h
    ADD CONSTRAINT sketches_1h_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: sketches_1m sketches_1m_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_1m
    ADD CONSTRAINT sketches_1m_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: sketches_6h sketches_6h_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_6h
    ADD CONSTRAINT sketches_6h_pkey PRIMARY KEY (stat_id, bucket);


--
-- Name: stat_shares stat_shares_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stat_shares
    ADD CONSTRAINT stat_shares_pkey PRIMARY KEY (stat_id);


--
-- Name: stats stats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stats
    ADD CONSTRAINT stats_pkey PRIMARY KEY (id);


--
-- Name: totp_steps totp_steps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.totp_steps
    ADD CONSTRAINT totp_steps_pkey PRIMARY KEY (account_id, purpose);


--
-- Name: accounts_email_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX accounts_email_key ON public.accounts USING btree (lower(email));


--
-- Name: alert_deliveries_alert_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_deliveries_alert_idx ON public.alert_deliveries USING btree (alert_id, created_at DESC);


--
-- Name: alert_deliveries_queued_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_deliveries_queued_idx ON public.alert_deliveries USING btree (created_at) WHERE (status = 'queued'::text);


--
-- Name: alert_events_alert_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_events_alert_idx ON public.alert_events USING btree (alert_id, at DESC, id DESC);


--
-- Name: alerts_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alerts_account_idx ON public.alerts USING btree (account_id);


--
-- Name: anomalies_account_started_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX anomalies_account_started_idx ON public.anomalies USING btree (account_id, started_at DESC);


--
-- Name: anomaly_state_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX anomaly_state_account_idx ON public.anomaly_state USING btree (account_id);


--
-- Name: anomaly_sweeps_finished_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX anomaly_sweeps_finished_idx ON public.anomaly_sweeps USING btree (finished_at);


--
-- Name: api_keys_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_account_idx ON public.api_keys USING btree (account_id);


--
-- Name: applied_batches_applied_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX applied_batches_applied_idx ON public.applied_batches USING btree (applied_at);


--
-- Name: audit_events_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_account_idx ON public.audit_events USING btree (account_id, id DESC);


--
-- Name: audit_events_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_at_idx ON public.audit_events USING btree (at);


--
-- Name: billing_events_received_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX billing_events_received_idx ON public.billing_events USING btree (received_at);


--
-- Name: dashboards_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX dashboards_account ON public.dashboards USING btree (account_id, created_at);


--
-- Name: email_confirmations_email_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX email_confirmations_email_idx ON public.email_confirmations USING btree (email, created_at);


--
-- Name: imports_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX imports_account_idx ON public.imports USING btree (account_id, created_at DESC);


--
-- Name: invitations_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX invitations_account_idx ON public.invitations USING btree (account_id);


--
-- Name: memberships_person_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memberships_person_idx ON public.memberships USING btree (person_id);


--
-- Name: parked_points_parked_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX parked_points_parked_idx ON public.parked_points USING btree (parked_at);


--
-- Name: password_resets_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX password_resets_account_idx ON public.password_resets USING btree (account_id);


--
-- Name: point_blocks_writes; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX point_blocks_writes ON public.point_blocks USING btree (day, stat_id) WHERE (seq > 0);


--
-- Name: points_stat_ts_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX points_stat_ts_idx ON public.points USING btree (stat_id, ts);


--
-- Name: rollup_days_pending_day_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rollup_days_pending_day_idx ON public.rollup_days_pending USING btree (day);


--
-- Name: rollup_pending_stat_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rollup_pending_stat_idx ON public.rollup_pending USING btree (stat_id, bucket);


--
-- Name: sessions_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_account_idx ON public.sessions USING btree (account_id);


--
-- Name: sessions_expires_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_expires_idx ON public.sessions USING btree (expires_at);


--
-- Name: sketch_dirty_hour_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sketch_dirty_hour_idx ON public.sketch_dirty USING btree (hour);


--
-- Name: stats_account_id_name_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX stats_account_id_name_key ON public.stats USING btree (account_id, name) WHERE (parent_id IS NULL);


--
-- Name: stats_series_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX stats_series_key ON public.stats USING btree (parent_id, tags) WHERE (parent_id IS NOT NULL);


--
-- Name: stats_series_name_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stats_series_name_idx ON public.stats USING btree (account_id, name) WHERE (parent_id IS NOT NULL);


--
-- Name: rollups_1h rollup_days_added; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollup_days_added AFTER INSERT ON public.rollups_1h REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.rollup_days_drop('3600');


--
-- Name: rollups_5m rollup_days_added; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollup_days_added AFTER INSERT ON public.rollups_5m REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.rollup_days_drop('300');


--
-- Name: rollups_1h rollup_days_deleted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollup_days_deleted AFTER DELETE ON public.rollups_1h REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.rollup_days_drop('3600');


--
-- Name: rollups_5m rollup_days_deleted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollup_days_deleted AFTER DELETE ON public.rollups_5m REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.rollup_days_drop('300');


--
-- Name: rollups_1h rollup_days_merged; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollup_days_merged AFTER UPDATE ON public.rollups_1h REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.rollup_days_drop('3600');


--
-- Name: rollups_5m rollup_days_merged; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollup_days_merged AFTER UPDATE ON public.rollups_5m REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.rollup_days_drop('300');


--
-- Name: rollups_1m rollups_5m_add; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollups_5m_add AFTER INSERT ON public.rollups_1m REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION public.rollups_5m_add();


--
-- Name: rollups_1m rollups_5m_merge; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rollups_5m_merge AFTER UPDATE ON public.rollups_1m REFERENCING OLD TABLE AS unmerged NEW TABLE AS merged FOR EACH STATEMENT EXECUTE FUNCTION public.rollups_5m_merge();


--
-- Name: alert_deliveries alert_deliveries_alert_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_deliveries
    ADD CONSTRAINT alert_deliveries_alert_id_fkey FOREIGN KEY (alert_id) REFERENCES public.alerts(id) ON DELETE CASCADE;


--
-- Name: alert_delivery_attempts alert_delivery_attempts_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_delivery_attempts
    ADD CONSTRAINT alert_delivery_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.alert_deliveries(id) ON DELETE CASCADE;


--
-- Name: alert_events alert_events_alert_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_events
    ADD CONSTRAINT alert_events_alert_id_fkey FOREIGN KEY (alert_id) REFERENCES public.alerts(id) ON DELETE CASCADE;


--
-- Name: alert_events alert_events_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_events
    ADD CONSTRAINT alert_events_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.alert_deliveries(id) ON DELETE SET NULL;


--
-- Name: alert_groups alert_groups_alert_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_groups
    ADD CONSTRAINT alert_groups_alert_id_fkey FOREIGN KEY (alert_id) REFERENCES public.alerts(id) ON DELETE CASCADE;


--
-- Name: alerts alerts_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alerts
    ADD CONSTRAINT alerts_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: anomalies anomalies_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomalies
    ADD CONSTRAINT anomalies_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: anomalies anomalies_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomalies
    ADD CONSTRAINT anomalies_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: anomaly_account_sweeps anomaly_account_sweeps_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_account_sweeps
    ADD CONSTRAINT anomaly_account_sweeps_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: anomaly_rescore anomaly_rescore_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_rescore
    ADD CONSTRAINT anomaly_rescore_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: anomaly_state anomaly_state_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_state
    ADD CONSTRAINT anomaly_state_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: anomaly_state anomaly_state_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.anomaly_state
    ADD CONSTRAINT anomaly_state_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: api_keys api_keys_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: api_keys api_keys_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.accounts(id) ON DELETE SET NULL;


--
-- Name: audit_events audit_events_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: billing_customers billing_customers_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.billing_customers
    ADD CONSTRAINT billing_customers_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: dashboards dashboards_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dashboards
    ADD CONSTRAINT dashboards_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: email_confirmations email_confirmations_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.email_confirmations
    ADD CONSTRAINT email_confirmations_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: imports imports_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT imports_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: invitations invitations_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: invitations invitations_invited_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_invited_by_fkey FOREIGN KEY (invited_by) REFERENCES public.accounts(id) ON DELETE SET NULL;


--
-- Name: memberships memberships_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: memberships memberships_person_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_person_id_fkey FOREIGN KEY (person_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: password_resets password_resets_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_resets
    ADD CONSTRAINT password_resets_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: point_ikeys point_ikeys_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.point_ikeys
    ADD CONSTRAINT point_ikeys_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: recovery_codes recovery_codes_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recovery_codes
    ADD CONSTRAINT recovery_codes_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: rollup_days rollup_days_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollup_days
    ADD CONSTRAINT rollup_days_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: rollup_state rollup_state_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollup_state
    ADD CONSTRAINT rollup_state_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: rollups_1d rollups_1d_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_1d
    ADD CONSTRAINT rollups_1d_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: rollups_1h rollups_1h_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_1h
    ADD CONSTRAINT rollups_1h_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: rollups_1m rollups_1m_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_1m
    ADD CONSTRAINT rollups_1m_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: rollups_5m rollups_5m_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollups_5m
    ADD CONSTRAINT rollups_5m_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_active_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_active_account_id_fkey FOREIGN KEY (active_account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: sketch_dirty sketch_dirty_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketch_dirty
    ADD CONSTRAINT sketch_dirty_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: sketches_1d sketches_1d_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_1d
    ADD CONSTRAINT sketches_1d_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: sketches_1h sketches_1h_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_1h
    ADD CONSTRAINT sketches_1h_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: sketches_1m sketches_1m_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_1m
    ADD CONSTRAINT sketches_1m_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: sketches_6h sketches_6h_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sketches_6h
    ADD CONSTRAINT sketches_6h_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: stat_shares stat_shares_stat_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stat_shares
    ADD CONSTRAINT stat_shares_stat_id_fkey FOREIGN KEY (stat_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: stats stats_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stats
    ADD CONSTRAINT stats_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: stats stats_parent_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stats
    ADD CONSTRAINT stats_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES public.stats(id) ON DELETE CASCADE;


--
-- Name: totp_steps totp_steps_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.totp_steps
    ADD CONSTRAINT totp_steps_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--
