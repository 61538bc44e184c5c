"""The signed-in Google accounts by label, and finding one by name.

The account `mcp-tools auth google` signs in without `--account` is `default`; others sign in
under labels of their own. Each one's token is a row of the state store
(`mcp_tools.servers.google.tokens`). A tool's `account` names one by label or by its address.
"""

from __future__ import annotations

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.google.config import (
    ALL_ACCOUNTS,
    DEFAULT_ACCOUNT,
    GoogleConfig,
    auth_command,
    signed_in,
)

__all__ = ["labels", "resolve", "several", "shown", "signed_in", "stored_email"]


def labels(config: GoogleConfig, env: Environment) -> list[str]:
    """Every account a tool may name: those signed in and those `[google.accounts]` sets up (for a
    principal with accounts of its own: those it connected and those shared with it)."""
    from mcp_tools.servers.google import principals

    principal = principals.holder(env)
    if principal != principals.OWNER:
        return list(principals.reachable(config, env, principal))
    found = signed_in(config, env)
    extra = sorted(label for label in config.accounts if label not in found)
    if DEFAULT_ACCOUNT in extra:
        extra.remove(DEFAULT_ACCOUNT)
        return [DEFAULT_ACCOUNT, *found, *extra]
    return [*found, *extra]


def stored_email(config: GoogleConfig, env: Environment, label: str) -> str | None:
    """The address the account signed in as (as stored at sign-in), or None."""
    from mcp_tools.servers.google.principals import whose
    from mcp_tools.servers.google.tokens import TokenSlot

    try:
        data = TokenSlot(env, label, whose(config, env, label)).read()
    except (LookupError, ValueError):
        return None
    email = data.get("account")
    return email if isinstance(email, str) and email else None


def several(config: GoogleConfig, env: Environment) -> bool:
    """Whether the tool list names accounts (the person's own: the list is the same for every caller)."""
    from mcp_tools.core.holders import calling_as

    with calling_as("local"):
        return config.service_account_file is None and len(labels(config, env)) > 1


def shown(config: GoogleConfig, env: Environment, label: str) -> str:
    """`work (alice@corp.example)`, or the label alone when the address is not known."""
    email = stored_email(config, env, label)
    return f"{label} ({email})" if email else label


def resolve(config: GoogleConfig, env: Environment, wanted: str | None) -> str:
    """The label of the account a call names (by label or address), or of the default one.

    Without a name: `[google] default_account`, else the only account, else `default`. An
    unknown name is `invalid_arguments` naming the accounts there are (for a principal with
    accounts of its own, `mcp_tools.servers.google.principals.resolve`)."""
    from mcp_tools.servers.google import principals

    principal = principals.holder(env)
    if principal != principals.OWNER:
        return principals.resolve(config, env, principal, wanted)
    known = labels(config, env)
    if wanted is None or not wanted.strip():
        if config.default_account is not None:
            return config.default_account
        if len(known) == 1:
            return known[0]
        if DEFAULT_ACCOUNT in known or not known:
            return DEFAULT_ACCOUNT
        raise ToolFailure(
            "invalid_arguments",
            "several Google accounts are signed in and none is the default: name one with account",
            f"account is one of: {', '.join(known)} (or set [google] default_account)",
        )
    name = wanted.strip()
    if name.lower() in known:
        return name.lower()
    if "@" in name:
        for label in known:
            email = stored_email(config, env, label)
            if email is not None and email.lower() == name.lower():
                return label
    listing = ", ".join(shown(config, env, label) for label in known) or "none"
    hint = (
        f"account is one of: {', '.join(known)}"
        if known
        else f"sign one in with `{auth_command()}` or `{auth_command('LABEL')}`"
    )
    if name.lower() == ALL_ACCOUNTS:
        raise ToolFailure("invalid_arguments", "this tool acts as one account at a time; name one", hint)
    raise ToolFailure("invalid_arguments", f"no Google account {name!r}; the accounts are: {listing}", hint)
