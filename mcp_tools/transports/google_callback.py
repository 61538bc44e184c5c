"""`/google/callback`: where Google sends a principal back after it connected its own account.

Served beside `/mcp` when `[http.oauth]` has an outside issuer (`mcp_tools.core.holders.callback_url`),
without the bearer token (a browser coming back from Google has none): the single-use `state` is
what authenticates it (`mcp_tools.servers.google.connect`). The answer is a plain page that names
no token, no principal and no account.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from mcp_tools.core.holders import CALLBACK_PATH

logger = logging.getLogger("mcp_tools.google")
MAX_PARAMETER = 4096


def google_callback_routes(app: Any) -> list[Route]:
    """The callback's route, where principals can connect accounts (else none)."""
    if app.environment.google_callback is None:
        return []

    async def callback(request: Request) -> Response:
        import anyio

        from mcp_tools.servers.google.config import google_config
        from mcp_tools.servers.google.connect import SignInRefused, finish

        state = request.query_params.get("state", "")[:MAX_PARAMETER]
        code = request.query_params.get("code", "")[:MAX_PARAMETER] or None
        if request.query_params.get("error"):
            code = None  # the person said no at Google: the state is used up all the same
        try:
            config = google_config(app.environment)
            await anyio.to_thread.run_sync(finish, config, app.environment, state, code)
        except SignInRefused as refused:
            logger.info("a Google sign-in at %s was refused: %s", CALLBACK_PATH, refused)
            return _page(400, "Not connected", str(refused))
        except Exception:  # a broken [google] section, the store down: said plainly, never a traceback
            logger.exception("a Google sign-in at %s failed", CALLBACK_PATH)
            return _page(500, "Not connected", "the server could not finish the sign-in; try again later")
        return _page(
            200, "Connected", "Your Google account is connected. Close this window and go back to your assistant."
        )

    return [Route(CALLBACK_PATH, callback, methods=["GET"])]


def google_sign_in_links(app: Any) -> Callable[[str], list[tuple[str, str, float]]] | None:
    """principal -> its Google sign-ins still open, (label, link, expires), for the approvals page
    (which shows them to a person signed in to it as that principal); None where principals cannot
    connect accounts."""
    if app.environment.google_callback is None:
        return None
    environment = app.environment

    def links(principal: str) -> list[tuple[str, str, float]]:
        from mcp_tools.servers.google.connect import pending_links

        return pending_links(environment, principal)

    return links


def _page(status: int, title: str, text: str) -> Response:
    body = (
        f"<!doctype html><meta charset=utf-8><title>mcp-tools: {html.escape(title)}</title>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>"
    )
    return HTMLResponse(
        body,
        status_code=status,
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"},
    )
