-- A new approval request looks at the open approvals of its tool (the one it may reuse, and one
-- for the same arguments whose target has changed since): an index on what is open.
CREATE INDEX approvals_open ON approvals (tool, status);
