"""The Google accounts of a principal of `[http.oauth]` (an outside issuer): its own, and those the person shares.

A principal names only the accounts it connected itself and those `[google.accounts.LABEL]
shared_with` lists it in (the person's own account of that label; an account of its own under the
same label wins). Any other name, another principal's label or address included, is `not_found`
in the same words as a label nobody has: whether an account exists elsewhere is not told. The
person who runs the server (stdio, the bearer tokens, an embedded authorization server) is the
holder `OWNER` and keeps every account, exactly as without principals.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_tools.core.holders import OWNER, calling

__all__ = ["OWNER", "holder", "not_connected", "reachable", "resolve", "whose"]
from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.labels import ALL_ACCOUNTS, DEFAULT_ACCOUNT


def holder(env: Environment) -> str:
    """Whose accounts the call in progress uses (`OWNER` outside a call, or without principals)."""
    return OWNER if env.holder_of is None else env.holder_of(calling())


def reachable(config: GoogleConfig, env: Environment, principal: str) -> dict[str, str]:
    """label -> whose token it is, for every account `principal` (not the owner) may name."""
    from mcp_tools.servers.google.tokens import signed_in

    found = dict.fromkeys(signed_in(config, env, principal), principal)
    shared = [label for label, settings in config.accounts.items() if principal in settings.shared_with]
    if shared:
        owned = signed_in(config, env)
        for label in shared:
            if label in owned:
                found.setdefault(label, OWNER)
    return dict(sorted(found.items(), key=lambda item: (item[0] != DEFAULT_ACCOUNT, item[0])))


def whose(config: GoogleConfig, env: Environment, label: str) -> str:
    """The holder of the token the call in progress uses for `label`."""
    principal = holder(env)
    if principal == OWNER:
        return OWNER
    return reachable(config, env, principal).get(label, principal)


def resolve(config: GoogleConfig, env: Environment, principal: str, wanted: str | None) -> str:
    """The label of the account a principal's call names, or of its default one."""
    found = reachable(config, env, principal)
    known = list(found)
    if wanted is None or not wanted.strip():
        if not known:
            raise ToolFailure("not_configured", "no Google account is connected for you on this server")
        if len(known) == 1:
            return known[0]
        if DEFAULT_ACCOUNT in known:
            return DEFAULT_ACCOUNT
        raise ToolFailure(
            "invalid_arguments",
            "several Google accounts are connected and none is the default: name one with account",
            f"account is one of: {', '.join(known)}",
        )
    name = wanted.strip().lower()
    if name in known:
        return name
    if "@" in name:
        for label in known:
            email = _email(env, label, found[label])
            if email is not None and email.lower() == name:
                return label
    if name == ALL_ACCOUNTS:
        raise ToolFailure("invalid_arguments", "this tool acts as one account at a time; name one")
    listing = ", ".join(_shown(env, label, found[label]) for label in known) or "none"
    raise ToolFailure("not_found", f"no Google account {wanted.strip()[:64]!r} here; yours: {listing}")


def not_connected(config: GoogleConfig, env: Environment, principal: str, scopes: Sequence[str]) -> ToolFailure:
    """A principal with no account: `not_configured`, with the link that connects one."""
    from mcp_tools.servers.google.connect import sign_in_link

    link = sign_in_link(config, env, principal, scopes)
    if link is None:
        return ToolFailure(
            "not_configured",
            "no Google account is connected for you on this server",
            "the person who runs it can share one with you ([google.accounts.LABEL] shared_with)",
        )
    return ToolFailure(
        "not_configured",
        "no Google account is connected for you on this server",
        "open sign_in_url in a browser to connect yours (the link works once, for 10 minutes), then call again",
        details={"sign_in_url": link},
    )


def _shown(env: Environment, label: str, holder: str) -> str:
    """`default (robot@partner.example)`, or the label alone when the address is not known."""
    email = _email(env, label, holder)
    return f"{label} ({email})" if email else label


def _email(env: Environment, label: str, holder: str) -> str | None:
    from mcp_tools.servers.google.tokens import TokenSlot

    try:
        email = TokenSlot(env, label, holder).read().get("account")
    except (LookupError, ValueError):
        return None
    return email if isinstance(email, str) else None
