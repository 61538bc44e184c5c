-- Approvals, who asked and who answered, every change of an approval's status, page logins and
-- the audit log: the policy's state.
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    args_display TEXT NOT NULL,
    summary TEXT NOT NULL,
    risk TEXT NOT NULL,
    principal TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    decided DOUBLE PRECISION,
    consumed DOUBLE PRECISION
);
CREATE INDEX approvals_lookup ON approvals (tool, args_sha256, status);
CREATE INDEX approvals_pending ON approvals (status, expires);

CREATE TABLE audit (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts DOUBLE PRECISION NOT NULL,
    transport TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    risk TEXT,
    decision TEXT NOT NULL,
    approval_id TEXT,
    duration_ms DOUBLE PRECISION NOT NULL,
    outcome TEXT NOT NULL
);

CREATE TABLE approval_meta (
    approval_id TEXT PRIMARY KEY,
    transport TEXT,
    decided_by TEXT,
    client TEXT
);

CREATE TABLE approval_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    approval_id TEXT NOT NULL,
    status TEXT NOT NULL
);

-- [postgresql]
-- Every change of status leaves an event (no code path can skip it) and wakes the replicas
-- that LISTEN on mcp_tools_approvals. Writers of approvals hold a table lock, so events commit
-- in the order of their numbers and a follower reading "seq > cursor" misses none.
CREATE FUNCTION approval_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status THEN
        INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
        PERFORM pg_notify('mcp_tools_approvals', NEW.id);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER approval_created AFTER INSERT ON approvals FOR EACH ROW EXECUTE FUNCTION approval_event();
CREATE TRIGGER approval_status_changed AFTER UPDATE OF status ON approvals FOR EACH ROW EXECUTE FUNCTION approval_event();

-- [sqlite]
-- Every change of status leaves an event (no code path can skip it). SQLite has one writer at a
-- time, so events commit in the order of their numbers; followers poll.
CREATE TRIGGER approval_created AFTER INSERT ON approvals BEGIN
    INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
END;
CREATE TRIGGER approval_status_changed AFTER UPDATE OF status ON approvals
WHEN NEW.status != OLD.status BEGIN
    INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
END;
-- [both]

CREATE TABLE page_logins (
    token_sha256 TEXT PRIMARY KEY,
    expires DOUBLE PRECISION NOT NULL,
    used DOUBLE PRECISION
);
