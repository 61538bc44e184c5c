-- Which channel gave an audited call its yes; the tickets of the approval cards shown in MCP Apps
-- hosts (a ticket, stored as its hash, answers one pending approval once); and whose approvals a
-- signed-in page session may see.
ALTER TABLE audit ADD COLUMN answered_by TEXT;

CREATE TABLE approval_tickets (
    ticket_sha256 TEXT PRIMARY KEY,
    approval_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    used DOUBLE PRECISION
);
CREATE INDEX approval_tickets_of ON approval_tickets (approval_id);

CREATE TABLE approval_ticket_failures (
    approval_id TEXT PRIMARY KEY,
    failures INTEGER NOT NULL
);

-- A sign-in link can be for one principal: its browser sees and answers only that one's approvals.
ALTER TABLE page_sessions ADD COLUMN principal TEXT;
