-- MCP tasks: a call a client asked to run as a task, its status, its result and the lease of the
-- runner that executes it (mcp_tools/state/tasks.py). Every read names the principal.
CREATE TABLE mcp_tasks (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    transport TEXT NOT NULL,
    client TEXT,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    ttl_ms BIGINT NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    approval_id TEXT,
    question TEXT,
    result TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    lease_owner TEXT,
    lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,
    scoped INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX mcp_tasks_by_principal ON mcp_tasks (principal, created, id);
CREATE INDEX mcp_tasks_by_expiry ON mcp_tasks (expires);
