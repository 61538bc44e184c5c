-- The Telegram bot's ledger: what was sent (nonces as hashes), the update offset, and the
-- polling lease that lets one replica at a time call getUpdates.
CREATE TABLE telegram_messages (
    nonce_sha256 TEXT PRIMARY KEY,
    approval_id TEXT NOT NULL,
    chat_id BIGINT NOT NULL,
    message_id BIGINT NOT NULL,
    text TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    settled INTEGER NOT NULL
);
CREATE INDEX telegram_messages_by_approval ON telegram_messages (approval_id, settled);
CREATE TABLE telegram_poller (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    owner TEXT NOT NULL,
    until DOUBLE PRECISION NOT NULL
);
CREATE TABLE telegram_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
