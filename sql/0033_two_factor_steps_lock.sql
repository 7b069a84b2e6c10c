-- Two-factor codes.
-- Each code of the app is accepted once per time step and purpose: the code that turned two-factor on may
-- still sign in during the same 30 s, but no code signs in twice, nor turns it off or renews the recovery
-- codes twice. The last step accepted for each purpose; a new table, no rewrite of accounts.
create table totp_steps (
  account_id uuid not null references accounts (id) on delete cascade,
  purpose    text not null check (purpose in ('sign-in', 'manage', 'delete')),
  step       bigint not null,
  primary key (account_id, purpose)
);
insert into totp_steps (account_id, purpose, step) select id, 'sign-in', totp_last_step from accounts where totp_last_step is not null;
-- accounts.totp_last_step stays for now: web processes of the previous release read it during a rolling
-- deploy. Nothing writes it any more; a later migration drops it.

-- Wrong codes in a row; at the limit the app's codes are refused (totp_locked_at set) until a recovery code or
-- a password reset lifts the lock, so someone holding the password gets a bounded number of guesses.
alter table accounts add column totp_failures integer not null default 0;
alter table accounts add column totp_locked_at timestamptz;
