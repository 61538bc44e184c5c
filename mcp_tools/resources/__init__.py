"""MCP resources: the stored documents of the namespaces that declare a `ResourceHook` (the files
store, the notes vaults), read through the policy gate; and the server's and namespaces' icons."""
