"""Where each Google account's token lives: the state store, one row per principal and label.

A token is read and written through a `TokenSlot` (one principal's account under one label).
Token files of an older version (`[google] token_file`, else `<state_dir>/google/token.json` for
`default`, and `<state_dir>/google/accounts/LABEL.json`) are moved into the store the first time
this process looks for the person's accounts, and deleted: the refresh token is kept, nobody signs
in again.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.google.labels import DEFAULT_ACCOUNT, LABEL
from mcp_tools.state.google_tokens import OWNER, SealedTokens

_FALLBACK: dict[Path, Any] = {}
_FALLBACK_LOCK = threading.Lock()


def state_of(env: Environment) -> Any:
    """The server's state store; where none was given (a namespace built on its own), the SQLite
    file of `state_dir`."""
    if env.state_store is not None:
        return env.state_store
    path = (env.state_dir / "policy.sqlite3").expanduser()
    with _FALLBACK_LOCK:
        store = _FALLBACK.get(path)
        if store is None:
            from mcp_tools.state.sqlite import PolicyStore

            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            store = _FALLBACK[path] = PolicyStore(path)
        return store


def vault(env: Environment) -> SealedTokens:
    from mcp_tools.state import credentials_key

    return SealedTokens(state_of(env), credentials_key(env.state_secret))


def token_path(config: Any, env: Environment) -> Path:
    """Where an older version kept the `default` account's token (`[google] token_file`)."""
    return Path(config.token_file or env.state_dir / "google" / "token.json").expanduser()


def old_files(config: Any, env: Environment) -> list[tuple[str, Path]]:
    """The token files of an older version still on disk, by label."""
    found = []
    default = token_path(config, env)
    if default.is_file():
        found.append((DEFAULT_ACCOUNT, default))
    folder = (env.state_dir / "google" / "accounts").expanduser()
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            if LABEL.match(path.stem) and path.stem != DEFAULT_ACCOUNT and path.is_file():
                found.append((path.stem, path))
    return found


def adopt_files(config: Any, env: Environment) -> None:
    """Move the person's token files into the state store (once: each is deleted when copied)."""
    if config.service_account_file is not None:
        return
    files = old_files(config, env)
    if files:
        tokens = vault(env)
        for label, path in files:
            tokens.adopt(OWNER, label, path)


def signed_in(config: Any, env: Environment, principal: str = OWNER) -> list[str]:
    """Labels with a stored token: `default` first, then the others by name."""
    if principal == OWNER:
        adopt_files(config, env)
    labels = state_of(env).google_labels(principal)
    return sorted(labels, key=lambda label: (label != DEFAULT_ACCOUNT, label))


class TokenSlot:
    """One principal's account under one label: its token, read and written sealed."""

    def __init__(self, env: Environment, label: str, principal: str = OWNER) -> None:
        self.tokens = vault(env)
        self.label = label
        self.principal = principal
        self.key = self.tokens.key

    @property
    def identity(self) -> tuple[int, str, str, bytes | None]:
        """What tells this slot from every other one in the process (the same store, principal and label)."""
        return (id(self.tokens.store), self.principal, self.label, self.key)

    def __repr__(self) -> str:
        return f"TokenSlot(label={self.label!r})"

    def read(self) -> dict[str, Any]:
        """The token; LookupError when the account is not signed in, ValueError when it does not open."""
        found = self.tokens.read(self.principal, self.label)
        if found is None:
            raise LookupError(self.label)
        return found[0]

    def version(self) -> int | None:
        return self.tokens.store.google_token_version(self.principal, self.label)

    def write(self, data: dict[str, Any]) -> int:
        return self.tokens.write(self.principal, self.label, data)

    def forget(self) -> bool:
        return bool(self.tokens.store.forget_google_token(self.principal, self.label))
