// Every error `code` the service answers with, what it means and what to do
// about it. Problem bodies link here (`type: /docs/problems#<code>`), the
// reference page /docs/problems is rendered from this list, and a test fails
// when the source throws a code this list does not explain.
import type { ErrorKind } from './errors.js'

export interface ProblemDoc {
  kind: ErrorKind | 'internal'
  meaning: string
  action: string
}

const p = (kind: ProblemDoc['kind'], meaning: string, action: string): ProblemDoc => ({ kind, meaning, action })

const FIX_FIELD = 'Correct the field named in `detail` and send the request again; nothing was stored.'

export const PROBLEMS: Record<string, ProblemDoc> = {
  // Input
  validation_failed: p(
    'invalid',
    "A field of the body or query string does not match the route's schema; `errors` lists every field at fault.",
    FIX_FIELD,
  ),
  malformed_body: p(
    'invalid',
    'The body could not be parsed, or is not a JSON object.',
    'Send a JSON object with `Content-Type: application/json`.',
  ),
  unsupported_media_type: p(
    'unsupported_media_type',
    "The body's content type is not one this route reads (v1 routes read JSON only).",
    'Send JSON with `Content-Type: application/json` (the legacy routes also read forms).',
  ),
  promql_bad_data: p(
    'invalid',
    'On /prometheus/api/v1: a missing or bad parameter, a PromQL syntax or type error, or a function, operator or modifier outside the supported set (named in `error`); answered as Prometheus answers, `{"status":"error","errorType":"bad_data"}` with 400.',
    'Correct the query or parameter named in `error`; the supported PromQL is listed in the README (Grafana and PromQL).',
  ),
  promql_execution: p(
    'invalid',
    'On /prometheus/api/v1: a query that cannot be evaluated, such as a binary operation matching several series on one side (many-to-many); errorType `execution`, status 422.',
    'Narrow the selectors or add on(...)/ignoring(...) so each side matches one series.',
  ),
  otlp_points_refused: p(
    'invalid',
    'On /otlp/v1/metrics: every data point of the request was refused (the first three are named with why); nothing was stored. When only some are refused the answer is 200 with partialSuccess instead.',
    'Correct the metrics named (name, timestamp, value) and export again.',
  ),
  unsupported_content_encoding: p(
    'unsupported_media_type',
    "The body's `Content-Encoding` is not one the service reads, or the body is not compressed the way the header says.",
    'Send the body uncompressed, or as gzip, deflate or br with a matching header.',
  ),
  missing_parameter: p(
    'invalid',
    'A required parameter is missing (on the legacy routes, a missing key answers 401 with this code).',
    'Add the parameter named in `detail`.',
  ),
  invalid_data: p(
    'invalid',
    "The `/ez` JSON batch's `data` is not an array of point objects.",
    'Send `{"ezkey": ..., "data": [{"stat": ..., "count": ...}, ...]}`.',
  ),
  batch_too_large: p(
    'invalid',
    'The batch holds more points than the route takes in one request.',
    'Split the batch; the limit is in `detail`.',
  ),
  count_and_value: p('invalid', 'A point carries both `count` and `value`.', 'Send `count` for counters or `value` for gauges, not both.'),
  kind_conflict: p(
    'invalid',
    "A point's kind differs from its stat's (a count sent to a gauge, or the reverse), or from an earlier point of the same batch.",
    "Send `count` to counters and `value` to gauges; the stat's kind is fixed by its first write.",
  ),
  unknown_stat: p(
    'invalid',
    'A dashboard card names a stat your account does not have (the name is in `detail`).',
    'Check the name (case-sensitive); a stat exists once a point was written to it.',
  ),
  unknown_card: p(
    'invalid',
    "A dashboard PATCH keeps a card by an id that is not one of this dashboard's cards.",
    'Send the ids the dashboard read gave, or leave `id` out for a new card.',
  ),
  missing_stat: p('invalid', 'The stat name is missing or empty.', 'Name the stat.'),
  invalid_stat_name: p(
    'invalid',
    'The stat name holds characters a name cannot hold (control characters, for example).',
    'Use printable text; see the naming rules in the README.',
  ),
  stat_name_too_long: p('invalid', 'The stat name is longer than the limit given in `detail`.', 'Shorten the name.'),
  missing_count: p('invalid', 'A counter write has no `count`.', 'Send `count` (a number).'),
  missing_value: p('invalid', 'A gauge write has no `value`.', 'Send `value` (a number).'),
  empty_count: p('invalid', '`count` is present but empty.', 'Send a number, or leave `count` out where it defaults to 1.'),
  empty_value: p('invalid', '`value` is present but empty.', 'Send a number.'),
  invalid_count: p('invalid', '`count` is not a number in decimal notation.', 'Send a decimal number such as `3` or `2.5`.'),
  invalid_value: p('invalid', '`value` is not a number in decimal notation.', 'Send a decimal number such as `42` or `-0.5`.'),
  count_out_of_range: p('invalid', '`count` is larger in magnitude than a stored number may be.', 'Send a smaller number.'),
  value_out_of_range: p('invalid', '`value` is larger in magnitude than a stored number may be.', 'Send a smaller number.'),
  empty_timestamp: p('invalid', '`t` is present but empty.', 'Send Unix seconds, or leave `t` out for now.'),
  invalid_timestamp: p('invalid', '`t` is not a number of Unix seconds.', 'Send Unix seconds (an integer).'),
  timestamp_too_old: p(
    'invalid',
    '`t` is before 2000-01-01 or older than the write window allows.',
    "Check the client's clock and that it sends seconds, not milliseconds; older history goes through import.",
  ),
  timestamp_in_future: p(
    'invalid',
    "`t` is more than a few minutes ahead of the server's clock.",
    "Check the client's clock and that it sends seconds, not milliseconds.",
  ),
  // Ingest protocols (docs/decisions.md §21)
  invalid_line: p(
    'invalid',
    'A line of an InfluxDB line-protocol body (or a StatsD line) does not parse; `detail` names the line and what is wrong in it.',
    'Fix that line (escape commas, spaces and `=` in names with `\\`, quote string fields); nothing of this request was stored.',
  ),
  invalid_precision: p(
    'invalid',
    'The line protocol `precision` is not one of ns, us, ms, s (1.x also takes n, u, m, h).',
    'Send one of those, or leave it out for nanoseconds.',
  ),
  invalid_series: p(
    'invalid',
    'A Prometheus remote-write request holds a series or sample the service cannot store (no `__name__`, a value that is not a finite number, a timestamp outside the window); `detail` names the series.',
    'Drop or relabel the series with `write_relabel_configs`; nothing of this request was stored.',
  ),
  malformed_protobuf: p(
    'invalid',
    'A remote-write body is not a snappy-compressed (block format) protobuf WriteRequest.',
    'Send Prometheus remote write 1.0 (`Content-Encoding: snappy`, `Content-Type: application/x-protobuf`).',
  ),
  invalid_text: p(
    'invalid',
    'A text field (or field name) holds a character it cannot hold: a NUL byte, an unpaired surrogate or another control character (a description, unit, key label or dashboard name also refuses newlines, ANSI escapes, invisible characters such as U+202E, U+200B, U+FEFF, U+2028, private-use and tag characters, and U+FFFD, which is what bytes that are not UTF-8 become). `detail` names the field.',
    'Remove the character, or send the text encoded as UTF-8; nothing of this request was stored.',
  ),
  invalid_ikey: p(
    'invalid',
    'The idempotency key is not a string, is too long, or holds characters it cannot hold (control characters, invisible characters, U+FFFD from bytes that are not UTF-8).',
    'Send a short printable string, the same one on every retry of the same point.',
  ),
  invalid_range: p('invalid', '`range` is not one of the chart ranges.', 'Use one of the ranges listed in `detail`.'),
  range_with_from_to: p('invalid', '`range` was given together with `from` or `to`.', 'Send either `range` or a `from`/`to` window.'),
  invalid_window: p('invalid', '`from` is not before `to`.', 'Swap or correct the dates.'),
  percentiles_on_counter: p(
    'invalid',
    "`percentiles` was asked of a counter: a counter's bucket is a sum, so only gauges have percentiles.",
    'Leave out `percentiles` on counters, or record the quantity as a gauge.',
  ),
  percentile_on_counter: p(
    'invalid',
    "An alert asked for a percentile (`aggregation` p50, p90, p95 or p99) of a stat that is a counter: a counter's minute is a sum, so only gauges have percentiles.",
    'Use `aggregation: "avg"` on counters, or record the quantity as a gauge.',
  ),
  invalid_date: p(
    'invalid',
    'A date is not ISO 8601, or is outside the dates the service can store.',
    'Send a date such as `2026-11-23` or `2026-11-23T10:00:00Z`.',
  ),
  invalid_id: p('invalid', 'An id in the path is not a UUID.', 'Use the id as the API returned it.'),
  invalid_stat_id: p('invalid', 'The stat id in the path is not a UUID.', 'Use the id from the share or embed URL as given.'),
  email_unavailable: p(
    'invalid',
    'E-mail alerts are not available on this deployment (no SMTP configured).',
    'Use a webhook or Slack channel, or ask the operator to set `SMTP_URL`.',
  ),
  webhook_refused: p(
    'invalid',
    'The webhook or Slack URL is not allowed: not http(s), or it points at a private, loopback or otherwise non-public address.',
    'Use a public URL; an operator can allow private targets with `WEBHOOK_ALLOW_PRIVATE=1`.',
  ),
  signature_missing: p(
    'invalid',
    'A payment-provider webhook arrived without its `Stripe-Signature` header.',
    'Only the payment provider calls this route; check the endpoint registered with it.',
  ),
  signature_invalid: p(
    'invalid',
    "A payment-provider webhook's signature does not match its body, or its timestamp is too old.",
    'Check that `STRIPE_WEBHOOK_SECRET` is the signing secret of the registered endpoint; nothing was changed.',
  ),
  // Import
  import_empty: p(
    'invalid',
    'The uploaded file is empty.',
    "Upload the file saved from the predecessor service or from this service's export.",
  ),
  import_unrecognised: p(
    'invalid',
    'The file is none of the formats import reads; `detail` says what was expected.',
    "Upload an export JSON (the predecessor's or ours), a long CSV (stat,value,timestamp) or a wide CSV (Time,<stat>,...).",
  ),
  import_invalid_json: p(
    'invalid',
    'The file looks like JSON but does not parse; `detail` gives the line.',
    'Fix the file at that line, or export it again.',
  ),
  import_invalid_csv: p(
    'invalid',
    'The CSV could not be read (an unclosed quote, for example); `detail` gives the line.',
    'Fix the file at that line, or export it again.',
  ),
  import_invalid_tags: p(
    'invalid',
    'A row of the file has a tag set that breaks the tag rules; the whole file is refused so no series is half restored. `detail` gives the line.',
    'Fix the tags at that line (keys a-z, 0-9, _, . and -, starting with a letter; values 1 to 200 printable characters), or export it again.',
  ),
  import_too_many_points: p('invalid', 'The file holds more points than one import takes.', 'Split the file into several and import each.'),
  malformed_multipart: p(
    'invalid',
    'The multipart/form-data body could not be read.',
    'Send the file as the field `file` of a well-formed multipart body, or as the raw body.',
  ),
  missing_file: p('invalid', 'The multipart/form-data body has no field named `file`.', 'Name the upload field `file`.'),
  // Credentials
  unauthorized: p(
    'unauthorized',
    'No credentials, or an API key that does not exist or was revoked.',
    'Send `Authorization: Bearer <API key>` with a live key (v1), or sign in.',
  ),
  invalid_key: p(
    'unauthorized',
    'The legacy `ezkey`/`ukey` is neither a known e-mail address nor a live API key.',
    'Check the key; create a new one under Keys if it was revoked.',
  ),
  bad_credentials: p('unauthorized', 'Wrong e-mail address or password.', 'Check both and try again; repeated failures are slowed down.'),
  session_invalid: p('unauthorized', 'The session expired or was signed out.', 'Sign in again.'),
  session_required: p(
    'forbidden',
    'This route takes a dashboard session, not an API key.',
    'Call it from the web app (signed in), not with a Bearer key.',
  ),
  csrf_failed: p(
    'forbidden',
    'A session write without the right `X-Service-CSRF` header.',
    'Send the `csrf_token` returned at sign-in in `X-Service-CSRF`.',
  ),
  wrong_password: p(
    'forbidden',
    'The password given to confirm a change (password change, account deletion, turning two-factor sign-in off) is wrong.',
    "Enter the account's current password; repeated failures are slowed down.",
  ),
  reset_token_invalid: p(
    'invalid',
    'The password-reset link is unknown, expired (links last an hour) or already used.',
    'Ask for a new link (POST /api/v1/auth/password-reset) and use the newest mail.',
  ),
  two_factor_required: p(
    'unauthorized',
    'The password is right, and the account has two-factor sign-in on: a code is needed too.',
    'Send the 6-digit code of the authenticator app, or one of the recovery codes, in `code`.',
  ),
  two_factor_invalid: p(
    'unauthorized',
    'The code is wrong, too old, or was already used (each app code and each recovery code works once).',
    'Enter the code the app shows now, or an unused recovery code.',
  ),
  two_factor_code_wrong: p(
    'invalid',
    'The code does not match the secret being set up.',
    "Check that the app's clock is right and enter the code it shows now.",
  ),
  two_factor_not_started: p(
    'invalid',
    'Turning two-factor sign-in on needs a set-up started first.',
    'Call POST /api/v1/auth/2fa/setup, enter the secret in the app, then send its code.',
  ),
  two_factor_enabled: p(
    'conflict',
    'Two-factor sign-in is already on.',
    'Turn it off first (POST /api/v1/auth/2fa/disable) to move to another app.',
  ),
  wrong_second_factor: p(
    'forbidden',
    'The code given to turn two-factor sign-in off, renew the recovery codes or delete the account is wrong or was already used (each app code works once per purpose).',
    'Enter the code the app shows now, or an unused recovery code.',
  ),
  second_factor_required: p(
    'forbidden',
    'The account has two-factor sign-in on: deleting it takes a current code besides the password.',
    'Send the code the app shows now, or an unused recovery code, in `code`.',
  ),
  two_factor_locked: p(
    'forbidden',
    "Too many wrong two-factor codes in a row: the authenticator app's codes are refused until the lock is lifted.",
    'Use one of your recovery codes (it lifts the lock), or reset the password by mail (so does that).',
  ),
  subscription_active: p(
    'conflict',
    'The account still has a paid subscription; deleting it now would leave the subscription running.',
    'Cancel the subscription in the billing portal, then delete the account.',
  ),
  // Plan limits
  daily_point_limit: p(
    'quota',
    "The plan's points per day are used up (UTC day).",
    'Wait for the next UTC day or upgrade the plan; nothing of this request was stored.',
  ),
  stat_limit: p(
    'quota',
    "The plan's number of tracked stats is reached; writes to new stats are refused.",
    'Delete stats you no longer need or upgrade; existing stats keep taking points.',
  ),
  series_limit: p(
    'quota',
    'The stat holds the most series (tag sets) a stat may hold; writes of new tag sets to it are refused.',
    'Drop a tag whose values never repeat (a request id, a timestamp), or write the new series under another stat; nothing of this request was stored.',
  ),
  invalid_tags: p(
    'invalid',
    "A point's tags break a rule (at most 10; key [a-z][a-z0-9_.-]{0,63}; value 1 to 200 printable characters).",
    'Fix the tag named in `detail`; nothing of this request was stored.',
  ),
  invalid_filter: p(
    'invalid',
    'A `filter=` or `group_by=` parameter is not key:value pairs or a tag key.',
    'Write host:web1,region:eu (filter) or host (group_by).',
  ),
  free_tier_full: p('quota', 'Every free-plan slot on this deployment is taken.', 'Upgrade to a paid plan to record data.'),
  plan_lacks_anomaly_detection: p(
    'forbidden',
    'The plan does not include anomaly detection.',
    'Upgrade to starter, pro or business; diagnostics still say why each stat is not scored.',
  ),
  alert_limit: p('quota', "The plan's number of alerts is reached.", 'Delete an alert or upgrade the plan.'),
  // Missing things
  not_found: p(
    'not_found',
    'The thing named in `detail` does not exist in your account.',
    "Check the name or id; other accounts' data is never visible.",
  ),
  route_not_found: p('not_found', 'No route has this method and path.', 'Check the path against the API reference (/docs).'),
  stat_not_found: p(
    'not_found',
    'No stat of that name in your account.',
    'Check the name (names are case-sensitive); a stat exists once a point was written to it.',
  ),
  alert_not_found: p('not_found', 'No alert with that id in your account.', 'List alerts to find the id.'),
  share_not_found: p(
    'not_found',
    'The stat is not shared, or the share token is wrong or was rotated.',
    "Ask the stat's owner for the current embed URL.",
  ),
  confirmation_not_found: p(
    'not_found',
    'The e-mail confirmation link is unknown or was already used.',
    'Use the newest confirmation e-mail, or recreate the alert.',
  ),
  dashboard_not_found: p('not_found', 'No dashboard with that id in your account.', 'List dashboards to find the id.'),
  import_not_found: p('not_found', 'No import with that id in your account.', 'Use the id the upload answered with.'),
  method_not_allowed: p(
    'method_not_allowed',
    'The path exists but not with this method.',
    'Check the method against the API reference (/docs).',
  ),
  already_subscribed: p(
    'conflict',
    'The account already has a live subscription.',
    'Change or cancel the plan in the billing portal (`GET /api/billing/portal`).',
  ),
  alert_pending_confirmation: p(
    'conflict',
    "The alert's e-mail address is not confirmed yet, so nothing (not even a test) may be mailed to it.",
    'Click the link in the confirmation mail, then try again.',
  ),
  forbidden_role: p(
    'forbidden',
    "Your role in this account is below what the route needs (owner > admin > member > viewer; docs/decisions.md §23), or an API key's creator's is (a key acts with at most its creator's current role; a removed member's keys stop); `detail` names the role needed. Nothing was changed.",
    'Ask an owner or admin of the account for that role, or for them to make the change.',
  ),
  forbidden_scope: p(
    'forbidden',
    "The API key's scope does not cover this route: a `write` key only sends points, a `read` key only reads (GET). Nothing was changed.",
    'Use a key of scope `full` (or `read`/`write` as the route needs), made under Keys.',
  ),
  not_a_member: p(
    'forbidden',
    'You were removed from the account this session acts on; nothing was changed.',
    'Switch to another of your accounts (GET /api/v1/accounts, POST /api/v1/session/account).',
  ),
  last_owner: p(
    'conflict',
    'The account would be left without an owner; nothing was changed.',
    'Transfer ownership first (POST /api/v1/account/transfer).',
  ),
  not_active_account: p(
    'conflict',
    'POST /api/v1/account/leave named another account than the one the session acts on; nothing was changed.',
    'Reload the page (the session was switched elsewhere), or switch to the account first, then leave it.',
  ),
  already_member: p(
    'conflict',
    'The address is already a member of the account; nothing was sent or changed.',
    'Change their role on the members page instead.',
  ),
  invalid_invitation: p(
    'invalid',
    'The invitation link is unknown, expired (links last 7 days), revoked or already used; nothing was changed.',
    "Ask the account's owner or an admin for a new invitation.",
  ),
  invitation_email_mismatch: p(
    'forbidden',
    'The invitation was sent to another e-mail address than the signed-in one; nothing was changed.',
    'Sign in (or sign up) with the invited address, then open the link again.',
  ),
  invitation_mail_throttled: p(
    'rate_limited',
    'The address has had invitations from 3 accounts today, or this account has sent its 10 for today; nothing was stored.',
    'Try again tomorrow.',
  ),
  email_taken: p('conflict', 'An account with this e-mail address exists.', 'Sign in instead.'),
  body_too_large: p('too_large', 'The request body is larger than the route takes.', 'Send less per request (split batches).'),
  too_many_attempts: p(
    'rate_limited',
    'Too many sign-in, sign-up or password-reset attempts for this e-mail address or client address; each further attempt waits a little longer (up to a minute; for reset mail to one address up to a day, and at most 5 a day).',
    'Wait the seconds given in `Retry-After`; check the e-mail address and password.',
  ),
  confirmation_mail_throttled: p(
    'rate_limited',
    'An e-mail alert to an unconfirmed address would send a confirmation mail, and that address has had confirmation mails from 3 accounts today, or this account has sent its 10 for today. An address already awaiting confirmation is never mailed again (its link arms every alert to it); nothing was stored.',
    'Confirm the address with the link already sent, use an address already confirmed, or try again tomorrow.',
  ),
  rate_limited: p(
    'rate_limited',
    'Too many requests for the account (or client address) in a short time.',
    'Wait the seconds given in `Retry-After`, then retry; spread requests out.',
  ),
  billing_unavailable: p(
    'unavailable',
    'Billing is not configured on this deployment (the missing setting is named), or the payment provider refused the configured key.',
    'Operators: set the setting named in `detail`. Users: try again later.',
  ),
  unavailable: p(
    'unavailable',
    'A dependency (database or queue) is down for a moment; nothing was stored.',
    'Retry with backoff; retries with the same `t` and `ikey` are stored once.',
  ),
  internal: p(
    'internal',
    'An unexpected error; it was logged with the request id given in `detail`.',
    'Retry; if it persists, report the request id.',
  ),
}
