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
