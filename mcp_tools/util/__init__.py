"""Small utilities at the bottom: text, charsets, secrets, logs, metrics, the sandbox, net."""
