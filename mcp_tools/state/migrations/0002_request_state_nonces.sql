-- Each requestState answer counts once in the whole deployment: the first replica to see its
-- nonce records it here, every later sight (on any replica) is a replay.
CREATE TABLE request_state_nonces (
    nonce_sha256 TEXT PRIMARY KEY,
    expires DOUBLE PRECISION NOT NULL
);
CREATE INDEX request_state_nonces_expires ON request_state_nonces (expires);
