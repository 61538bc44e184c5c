"""Builds the running app from the config: namespaces, policy, state, channels."""
