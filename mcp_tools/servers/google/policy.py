"""What `[google.accounts.LABEL]` narrows for one account, and policy rules that name an account.

`read_only` keeps every tool that changes something from acting as the account; the account's
own `allowed_recipients` replace `[gmail] allowed_recipients` for mail it sends; its own
`[google.accounts.LABEL.drive] access` replaces `[drive] access` (and so the Drive scopes asked
for it). A `[policy]` rule may name an account after the tool: `"gmail.send@work" = "high"`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_tools.core.tooling import Risk, ToolFailure
from mcp_tools.servers.google.config import GoogleConfig


def narrowed(args: tuple[Any, ...], google: GoogleConfig, label: str, namespace: str) -> tuple[Any, ...]:
    """A namespace service's constructor arguments with the account's own settings in its section."""
    settings = google.accounts.get(label)
    if settings is None:
        return args
    from pydantic import BaseModel

    update: dict[str, Any] = {}
    if namespace == "gmail" and settings.allowed_recipients is not None:
        update["allowed_recipients"] = settings.allowed_recipients
    if namespace == "drive" and settings.drive is not None and settings.drive.access is not None:
        update["access"] = settings.drive.access
    if not update:
        return args
    changed = []
    for value in args:
        if (
            isinstance(value, BaseModel)
            and not isinstance(value, GoogleConfig)
            and set(update) <= set(value.model_fields)
        ):
            value = value.model_copy(update=update)
        changed.append(value)
    return tuple(changed)


def refuse_if_read_only(google: GoogleConfig, label: str, tool: str, reads: bool) -> None:
    """A tool that changes something may not act as an account set `read_only`."""
    settings = google.accounts.get(label)
    if settings is not None and settings.read_only and not reads:
        raise ToolFailure(
            "denied_by_policy",
            f"{tool} cannot act as the Google account {label!r}: [google.accounts.{label}] read_only = true",
            "use another account, or only read from this one",
        )


def account_rules(policy: Mapping[str, Any]) -> dict[tuple[str, str], Risk]:
    """`[policy] rules` keys of the form `tool@account`, as (tool, label) -> risk."""
    rules = policy.get("rules") if isinstance(policy, Mapping) else None
    found: dict[tuple[str, str], Risk] = {}
    if not isinstance(rules, Mapping):
        return found
    for key, value in rules.items():
        if isinstance(key, str) and "@" in key and isinstance(value, str):
            tool, _, label = key.partition("@")
            try:
                found[(tool.strip(), label.strip().lower())] = Risk.parse(value)
            except ValueError:
                continue
    return found
