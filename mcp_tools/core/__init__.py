"""The model every layer shares: what a tool is, the config, the selection grammar."""
