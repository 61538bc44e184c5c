-- A principal's enabled tools were keyed by `principal + "\n" + namespace`: the namespace (the
-- mounted endpoint, '' for /mcp) gets a column of its own. A key splits at its last newline.
-- [postgresql]
ALTER TABLE enabled_tools ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
UPDATE enabled_tools
SET namespace = regexp_replace(principal, E'^.*\n', ''),
    principal = regexp_replace(principal, E'\n[^\n]*$', '')
WHERE strpos(principal, E'\n') > 0;
ALTER TABLE enabled_tools DROP CONSTRAINT enabled_tools_pkey;
ALTER TABLE enabled_tools ADD PRIMARY KEY (principal, namespace, tool);
-- [sqlite]
-- SQLite changes no primary key in place: the table is built again. rtrim(key, <every other
-- character of key>) leaves the key up to and with its last newline.
ALTER TABLE enabled_tools ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
UPDATE enabled_tools
SET namespace = substr(principal, length(rtrim(principal, replace(principal, char(10), ''))) + 1),
    principal = substr(principal, 1, length(rtrim(principal, replace(principal, char(10), ''))) - 1)
WHERE instr(principal, char(10)) > 0;
CREATE TABLE enabled_tools_by_namespace (
    principal TEXT NOT NULL,
    namespace TEXT NOT NULL DEFAULT '',
    tool TEXT NOT NULL,
    PRIMARY KEY (principal, namespace, tool)
);
INSERT OR IGNORE INTO enabled_tools_by_namespace (principal, namespace, tool)
SELECT principal, namespace, tool FROM enabled_tools;
DROP TABLE enabled_tools;
ALTER TABLE enabled_tools_by_namespace RENAME TO enabled_tools;
