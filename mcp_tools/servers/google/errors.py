"""Every Google error becomes one of our error kinds with a hint the model can act on."""

from __future__ import annotations

import json
from typing import Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.google.account import reauth_hint
from mcp_tools.servers.google.config import auth_command
from mcp_tools.servers.google.scopes import short

RATE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
SCOPE_REASONS = frozenset({"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"})
DISABLED_REASONS = frozenset({"accessNotConfigured", "SERVICE_DISABLED"})
MAX_MESSAGE = 300


def parse_error(content: bytes | str | None) -> tuple[str, set[str]]:
    """Google's message and every reason named in the error body."""
    try:
        error = json.loads(content or b"{}").get("error", {})
    except (ValueError, AttributeError):
        return "", set()
    if not isinstance(error, dict):
        return str(error)[:MAX_MESSAGE], set()
    reasons = {item.get("reason", "") for item in error.get("errors", []) if isinstance(item, dict)}
    reasons |= {item.get("reason", "") for item in error.get("details", []) if isinstance(item, dict)}
    return str(error.get("message", ""))[:MAX_MESSAGE], reasons - {""}


def is_retryable(status: int, reasons: set[str]) -> bool:
    return status == 429 or status >= 500 or (status == 403 and bool(reasons & RATE_REASONS))


def missing_scope_failure(tool: str, scopes: list[str], account: str | None = None) -> ToolFailure:
    names = ", ".join(short(scope) for scope in scopes) or "a scope it needs"
    return ToolFailure(
        "not_configured",
        f"{tool} needs the Google scope {names}, which this sign-in did not grant",
        f"Run `{auth_command(account)}`: it asks for the scopes of every enabled tool.",
        {"missing_scopes": [short(scope) for scope in scopes]},
    )


def map_http_error(
    status: int,
    content: bytes | str | None,
    *,
    tool: str,
    missing: list[str] | None = None,
    retry_after: float | None = None,
    redact: Any = None,
    account: str | None = None,
) -> ToolFailure:
    message, reasons = parse_error(content)
    if redact is not None:
        message = redact(message)
    said = f": {message}" if message else ""
    if status == 401:
        return ToolFailure("not_configured", "Google did not accept the stored sign-in", reauth_hint(account))
    if status == 403 and reasons & SCOPE_REASONS:
        return missing_scope_failure(tool, missing or [], account)
    if status == 403 and reasons & DISABLED_REASONS:
        return ToolFailure(
            "not_configured",
            f"the API is not enabled in the Google Cloud project of the OAuth client{said}",
            "Enable it under APIs & Services > Library in the Google Cloud console, wait a minute, retry.",
        )
    if status == 429 or (status == 403 and reasons & (RATE_REASONS | {"dailyLimitExceeded", "quotaExceeded"})):
        wait = int(retry_after) if retry_after else 60
        daily = "dailyLimitExceeded" in reasons
        return ToolFailure(
            "upstream_error",
            f"Google is rate limiting these calls{said}",
            "The daily quota is used up; retry tomorrow." if daily else f"Retry in about {wait} seconds.",
            {"status": status, "retry_after_seconds": 24 * 3600 if daily else wait},
        )
    if status == 403 and "exportSizeLimitExceeded" in reasons:
        return ToolFailure(
            "too_large",
            f"the file is larger than the 10 MB Google exports at most{said}",
            "Read a part of it another way (one sheet, a smaller copy), or open it in Google Drive.",
        )
    if status == 403:
        return ToolFailure(
            "denied_by_policy",
            f"Google refused the call{said}",
            "The account or its Workspace administrator does not allow this; it will not work on retry.",
        )
    if status == 404:
        return ToolFailure("not_found", f"Google has no such item{said}", "ids come from the search results")
    if status == 410:
        return ToolFailure("not_found", f"the item was deleted{said}", "read the list again for current ids")
    if status in (409, 412):
        return ToolFailure("conflict", f"the item changed or already exists{said}", "read it again, then retry")
    if status == 400:
        return ToolFailure("invalid_arguments", f"Google rejected the request{said}", "fix the arguments named")
    if status == 413:
        return ToolFailure("too_large", f"the request is too large for Google{said}")
    if status >= 500:
        return ToolFailure(
            "upstream_error", f"Google failed with status {status}{said}", "Retry in a minute.", {"status": status}
        )
    return ToolFailure("upstream_error", f"Google answered with status {status}{said}", None, {"status": status})
