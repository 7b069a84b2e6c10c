-- Confirmation mails are throttled per address across accounts: the count of an
-- address's confirmations of the last day is read on every e-mail alert created for an unconfirmed one.
create index email_confirmations_email_idx on email_confirmations (email, created_at);
