-- What bounds the embedded authorization server's tables: whether the person ever consented to a
-- registered client (one that never did expires, and goes first when the table is full), and the
-- client of each waiting consent request (capped per client).
ALTER TABLE oauth_clients ADD COLUMN consented DOUBLE PRECISION;
UPDATE oauth_clients SET consented = created WHERE client_id IN (SELECT client_id FROM oauth_grants);
ALTER TABLE oauth_requests ADD COLUMN client_id TEXT;
CREATE INDEX oauth_requests_client ON oauth_requests (client_id);
