-- The Google accounts each principal signed in (mcp_tools/state/google_tokens.py): the token of
-- one account under its label, sealed under [state] secret, so every replica refreshes and stores
-- the same one. The person who runs the server is the principal '' (stdio, bearer tokens); a
-- principal of [http.oauth] has accounts of its own. `version` grows with every write: a process
-- that holds an older copy loads the new one.
CREATE TABLE google_tokens (
    principal TEXT NOT NULL,
    label TEXT NOT NULL,
    data TEXT NOT NULL,
    version BIGINT NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (principal, label)
);
-- A principal's sign-in to Google in progress: the sha256 of its single-use `state`, whose it is,
-- the label it signs in, and its PKCE verifier (sealed under [state] secret), until it expires.
CREATE TABLE google_sign_ins (
    state_sha256 TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    label TEXT NOT NULL,
    data TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE INDEX google_sign_ins_by_principal ON google_sign_ins (principal);
