"""The state a 2026-07-28 retry brings back: an input-required result seals who asked for what, and
the retried call is answered only when that state is ours for this very call and used once.

Both askers that answer through a retry (the form in the MCP server, the approvals-page link in
`elicit_url`) read it here, so the checks cannot drift apart.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from mcp_tools.policy.gate import ConfirmationRequest
from mcp_tools.state.store import StateStore


async def claimed_state(
    store: StateStore,
    sealed: object,
    request: ConfirmationRequest,
    principal: str,
    ttl: float,
    named: tuple[str, ...] = (),
) -> dict[str, Any] | None:
    """The retry's state when it names this tool, these arguments and this principal (and a string
    for each key in `named`), its nonce then used up; None for anything else (ask afresh)."""
    if not isinstance(sealed, str):
        return None
    try:
        state = json.loads(sealed)
    except ValueError:
        return None
    if (
        not isinstance(state, dict)
        or state.get("tool") != request.tool
        or state.get("args") != request.args_sha256
        or state.get("principal") != principal
        or not all(isinstance(state.get(key), str) for key in named)
    ):
        return None
    if not await anyio.to_thread.run_sync(store.use_nonce, str(state.get("nonce")), ttl):
        return None
    return state
