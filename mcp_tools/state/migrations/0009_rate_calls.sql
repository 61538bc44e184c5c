-- `[http.oauth] calls_per_minute` counted across replicas: one row per admitted tool call, for a
-- minute (a sliding window per principal).
CREATE TABLE rate_calls (
    principal TEXT NOT NULL,
    ts DOUBLE PRECISION NOT NULL
);
CREATE INDEX rate_calls_by_principal ON rate_calls (principal, ts);
CREATE INDEX rate_calls_ts ON rate_calls (ts);
