"""Where the server's shared state lives: the SQLite file of one machine, or PostgreSQL for several.

`open_state_store(config)` is the one place that chooses: `[state] url` (or MCP_TOOLS_STATE_URL)
set to a `postgresql://` URL picks PostgreSQL, imported only then; unset keeps SQLite. The store
itself is `mcp_tools.state.store.StateStore`; its schema, the same for both engines, is the
numbered files of `mcp_tools.state.migrations`.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from mcp_tools.core.config import Config, ConfigError
from mcp_tools.util.secrets import known_secrets

if TYPE_CHECKING:
    from mcp_tools.state.store import StateStore


def request_state_security(config: Config, ttl: float) -> Any:
    """How requestState is sealed: under a key derived from `[state] secret`, so every replica
    that shares the secret opens what another sealed; without one, a key of this process alone."""
    from mcp.server.request_state import RequestStateSecurity

    secret = config.state_secret()
    if secret is None:
        return RequestStateSecurity.ephemeral(ttl=ttl)
    known_secrets.add(secret)
    return RequestStateSecurity(keys=[derive_key(secret, "requestState")], ttl=ttl)


def credentials_key(secret: str | None) -> bytes | None:
    """The key stored credentials (Google tokens) are encrypted under; None without a shared secret."""
    return derive_key(secret, "credentials") if secret else None


def derive_key(secret: str, purpose: str) -> bytes:
    """A 32-byte key for one purpose (HMAC-SHA256 of the purpose under the shared secret)."""
    return hmac.new(secret.encode(), f"mcp-tools {purpose} v1".encode(), hashlib.sha256).digest()


def register_url_secrets(url: str) -> None:
    """The password (and the whole URL) in a state URL are secrets: never logged, never shown."""
    known_secrets.add(url)
    password = urlsplit(url).password
    if password:
        known_secrets.add(password)
        known_secrets.add(unquote(password))


def open_state_store(config: Config) -> StateStore:
    """The store the config names; raises ConfigError with a clear reason when it cannot open."""
    url = config.state_url()
    if url is None:
        from mcp_tools.state.sqlite import PolicyStore

        return PolicyStore(config.state_dir() / "policy.sqlite3")
    register_url_secrets(url)
    secret = config.state_secret()
    if secret is None:
        raise ConfigError(
            "a PostgreSQL state needs a shared secret: set [state] secret (or MCP_TOOLS_STATE_SECRET) to the "
            "same random value of at least 32 bytes on every replica, e.g. from `openssl rand -hex 32`"
        )
    known_secrets.add(secret)
    try:
        from mcp_tools.state.postgres import PostgresStateStore
    except ImportError:
        from mcp_tools.util.commands import pip_install

        raise ConfigError(f"PostgreSQL state needs psycopg: {pip_install('postgres')}") from None
    from mcp_tools.state.spool import SPOOL_FILE, AuditSpool

    store = PostgresStateStore(
        url, pool_size=config.state.pool_size, connect_timeout=config.state.connect_timeout_seconds
    )
    store.audit_spool = AuditSpool(config.state_dir() / SPOOL_FILE)
    return store
