"""Connecting a Google account by URL-mode elicitation (MCP 2025-11-25), the link kept from the model.

When a principal's call comes back `not_configured` with a `sign_in_url`
(`mcp_tools.servers.google.connect`) and its client declared `elicitation: {url: {}}` on a
connection that can send it a request, the server asks the client to open the link
(`elicitation/create`, `mode: "url"`) instead of handing the link to the model. Once the person
has signed in at Google and `/google/callback` stored the account, the server sends
`notifications/elicitation/complete` and runs the call again: its answer is the call's. Declined,
or not finished in time, the call answers `not_configured` without the link.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from mcp_tools.approvals.elicit_url import MODERN, declares_url
from mcp_tools.policy.calls import CallOutcome

LINK = "sign_in_url"
POLL_SECONDS = 0.25  # the callback may run on another replica: the store is asked until it is done


def offers_url(ctx: Any) -> bool:
    from mcp_types.version import is_version_at_least

    modern = bool(ctx.protocol_version) and is_version_at_least(ctx.protocol_version, MODERN)
    return not modern and declares_url(ctx) and bool(ctx.session.can_send_request)


async def connect_by_url(
    ctx: Any, app: Any, principal: str, outcome: CallOutcome, again: Callable[[], Awaitable[CallOutcome]]
) -> CallOutcome:
    """`outcome`, or, for a sign-in link a URL-mode client can open, the call's answer once connected."""
    error = outcome.error
    if not error or LINK not in error or not offers_url(ctx):
        return outcome
    store = app.store
    holder = app.environment.holder_of(principal) if app.environment.holder_of is not None else ""
    elicitation_id = secrets.token_urlsafe(16)
    try:
        answer = await ctx.session.elicit_url(
            message="Connect your Google account to use this tool (Google's sign-in page opens).",
            url=str(error[LINK]),
            elicitation_id=elicitation_id,
            related_request_id=ctx.request_id,
        )
    except Exception:  # a client that errors instead of answering has not opened it
        return _without_link(outcome)
    if answer.action != "accept":
        return _without_link(outcome)
    deadline = anyio.current_time() + app.config.policy.elicitation_timeout_seconds
    while not await anyio.to_thread.run_sync(store.google_labels, holder):
        if anyio.current_time() >= deadline:
            return _without_link(outcome)
        await anyio.sleep(POLL_SECONDS)
    with contextlib.suppress(Exception):  # a client gone away needs no notice
        await ctx.session.send_elicit_complete(elicitation_id, related_request_id=ctx.request_id)
    return await again()


def _without_link(outcome: CallOutcome) -> CallOutcome:
    """The answer without the link: it went to the client's person, never to the model."""
    import json

    structured = dict(outcome.structured or {})
    error = {key: value for key, value in dict(structured.get("error") or {}).items() if key != LINK}
    error["hint"] = "connect a Google account through the sign-in page the client offered, then call again"
    structured["error"] = error
    return CallOutcome(text=json.dumps({"error": error}), structured=structured, is_error=True)
