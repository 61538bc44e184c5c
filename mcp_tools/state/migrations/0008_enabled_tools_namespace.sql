-- A principal's enabled tools were keyed by `principal + "\n" + namespace`: the namespace (the
-- mounted endpoint, '' for /mcp) gets a column of its own. A key splits at its last newline.
ALTER TABLE enabled_tools ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
UPDATE enabled_tools
SET namespace = regexp_replace(principal, E'^.*\n', ''),
    principal = regexp_replace(principal, E'\n[^\n]*$', '')
WHERE strpos(principal, E'\n') > 0;
ALTER TABLE enabled_tools DROP CONSTRAINT enabled_tools_pkey;
ALTER TABLE enabled_tools ADD PRIMARY KEY (principal, namespace, tool);
