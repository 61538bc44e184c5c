"""Whose Google accounts a call uses: the person who runs the server, or a principal with its own.

Without `[http.oauth]`, or with its embedded authorization server (one person), every caller is the
person who runs the server (the holder `OWNER`): stdio, the HTTP bearer tokens, the text calls. With
an outside issuer, each principal its tokens speak for holds accounts of its own; the static bearer
tokens (and stdio) still speak for the person who runs the server. The gate sets the calling
principal for the whole of a call (its risk, its checks, its handler), so what a hook resolves
always belongs to the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

OWNER = ""  # the holder of the accounts of the person who runs the server
CALLING: ContextVar[str] = ContextVar("mcp_tools_calling_principal", default="local")


def calling() -> str:
    """The principal of the call in progress ("local" outside one)."""
    return CALLING.get()


@contextmanager
def calling_as(principal: str) -> Iterator[None]:
    token = CALLING.set(principal)
    try:
        yield
    finally:
        CALLING.reset(token)


def holders(config: Any) -> Callable[[str], str]:
    """principal -> whose accounts it uses, for this config (`mcp_tools.core.config.Config`)."""
    oauth = config.http.oauth
    if oauth is None or oauth.embedded:
        return _owner
    owners = frozenset({"local", *config.http_tokens()})

    def holder(principal: str) -> str:
        # fail closed: only a principal known to be the person's own is the person
        return OWNER if principal in owners and "@" not in principal else principal

    return holder


CALLBACK_PATH = "/google/callback"


def callback_url(config: Any) -> str | None:
    """Where Google sends a principal's sign-in back to: this server's own address (the origin of
    `[http.oauth] resource`) and `/google/callback`; None where there are no principals."""
    from urllib.parse import urlsplit

    oauth = config.http.oauth
    if oauth is None or oauth.embedded:
        return None
    parts = urlsplit(oauth.resource)
    base = parts.path.rstrip("/").removesuffix("/mcp")
    return f"{parts.scheme}://{parts.netloc}{base}{CALLBACK_PATH}"


def _owner(principal: str) -> str:
    return OWNER
