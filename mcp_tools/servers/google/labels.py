"""The labels Google accounts are signed in under: `default`, and the person's own short names."""

from __future__ import annotations

import re

DEFAULT_ACCOUNT = "default"  # the label of the account `mcp-tools auth google` signs in without --account
ALL_ACCOUNTS = "all"  # what a reading tool's `account` says to ask every account at once
LABEL = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


def check_label(label: str) -> str:
    """A label as stored and typed: lower-case letters, digits, - and _, at most 32 characters."""
    if not LABEL.match(label) or label == ALL_ACCOUNTS:
        raise ValueError(
            f"{label!r} cannot name an account: use 1-32 lower-case letters, digits, - or _ (and not 'all')"
        )
    return label
