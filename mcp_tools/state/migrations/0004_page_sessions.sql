-- Browsers signed in to the approvals page, by the hash of their cookie: a sign-in through one
-- replica counts on all of them.
CREATE TABLE page_sessions (
    cookie_sha256 TEXT PRIMARY KEY,
    expires DOUBLE PRECISION NOT NULL
);
