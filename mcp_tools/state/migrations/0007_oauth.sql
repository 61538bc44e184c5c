-- The embedded authorization server's registered clients (sealed under [state] secret), consent
-- requests, codes and tokens (only their sha256), shared by every replica.
CREATE TABLE oauth_clients (
    client_id TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE oauth_requests (
    id_sha256 TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE TABLE oauth_grants (
    sha256 TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    client_id TEXT NOT NULL,
    family TEXT NOT NULL,
    data TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    used DOUBLE PRECISION,
    revoked DOUBLE PRECISION
);
CREATE INDEX oauth_grants_family ON oauth_grants (family);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
