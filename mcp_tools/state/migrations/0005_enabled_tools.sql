-- The tools each principal enabled through dynamic discovery, served by every replica.
CREATE TABLE enabled_tools (
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    PRIMARY KEY (principal, tool)
);
