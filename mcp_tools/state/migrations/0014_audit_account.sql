-- The upstream accounts a call acted as, by label (a Google account's `work`), so each row says
-- whose mailbox or drive a call touched. A label only: never a token or another credential.
ALTER TABLE audit ADD COLUMN account TEXT;
