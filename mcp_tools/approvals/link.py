"""The approvals page's single-use links (`/approvals/e/<id>/<ticket>`), handed to a client by
URL-mode elicitation where a form would be the person's own yes (`mcp_tools.approvals.elicit_url`).

A link opens one pending approval, bound to it and its principal by the approval card's tickets
(only the ticket's sha256 is stored; five wrong tickets close the approval to every ticket), and
answers it once: Approve or Deny spends every ticket of the approval. It signs nobody in and
shows nothing else. POSTs must come from the page's own origin (checked before any route) and
carry a token derived from the ticket.
"""

from __future__ import annotations

import hashlib
import hmac
import html
from collections.abc import Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response

from mcp_tools.approvals.card import MAX_FAILURES, confirmation_text, ticket_hash
from mcp_tools.policy.decisions import Decisions
from mcp_tools.state.store import Approval, StateStore, TicketRefused

FORM_FIELD = "link_csrf"
MAX_TICKET_CHARS = 128
APPROVAL_ID_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")


def link_csrf(ticket: str) -> str:
    return hmac.new(ticket.encode(), b"mcp-tools approval link", hashlib.sha256).hexdigest()


class ApprovalLinks:
    """`show` (GET) and `answer` (POST) of one link; `shell(title, body, status=)` is the page's frame."""

    def __init__(self, store: StateStore, decisions: Decisions, shell: Callable[..., Response]) -> None:
        self.store = store
        self.decisions = decisions
        self.shell = shell

    def _open(self, request: Request, use: bool) -> tuple[Approval | None, str, str]:
        """The approval the link opens (None: it opens nothing), its id and ticket."""
        approval_id, ticket = request.path_params["approval_id"], request.path_params["ticket"]
        if not (0 < len(approval_id) <= 40 and set(approval_id) <= APPROVAL_ID_CHARS) or len(ticket) > MAX_TICKET_CHARS:
            return None, approval_id, ticket
        approval = self.store.get_approval(approval_id)
        if approval is None:
            return None, approval_id, ticket
        try:
            opened = self.store.check_ticket(
                approval_id, ticket_hash(ticket), approval.principal, use=use, max_failures=MAX_FAILURES
            )
        except TicketRefused:
            return None, approval_id, ticket
        return opened, approval_id, ticket

    def _refused(self) -> Response:
        return self.shell(
            "Link not valid",
            "<p>This link is unknown, already used, or its approval is no longer pending. "
            "Answer on the approvals page or another channel.</p>",
            status=403,
        )

    async def show(self, request: Request) -> Response:
        approval, approval_id, ticket = await anyio.to_thread.run_sync(self._open, request, False)
        if approval is None:
            return self._refused()
        base = html.escape(f"{str(request.scope.get('root_path', '')).rstrip('/')}/e/{approval_id}/{ticket}")
        token = html.escape(link_csrf(ticket))
        buttons = "".join(
            f'<form method="post" action="{base}/{action}"><input type="hidden" name="{FORM_FIELD}" value="{token}">'
            f'<button type="submit" class="{action}">{label}</button></form>'
            for action, label in (("approve", "Approve"), ("deny", "Deny"))
        )
        body = (
            f'<article class="approval status-pending"><pre class="confirmation">'
            f"{html.escape(confirmation_text(approval))}</pre>"
            f'<div class="actions">{buttons}</div></article>'
        )
        return self.shell("Approve a high-risk action", body)

    async def answer(self, request: Request) -> Response:
        action = request.path_params["action"]
        form = await request.form() if action in ("approve", "deny") else None
        presented = form.get(FORM_FIELD) if form is not None else None
        ticket = request.path_params["ticket"]
        if not isinstance(presented, str) or not hmac.compare_digest(presented.encode(), link_csrf(ticket).encode()):
            return self.shell("Not done", "<p>This answer did not come from the link's page.</p>", status=403)
        approval, _, _ = await anyio.to_thread.run_sync(self._open, request, True)
        if approval is None:
            return self._refused()
        try:
            decided = self.decisions.decide(approval.id, action == "approve", "approvals page (link)")
        except (LookupError, ValueError) as exc:
            return self.shell("Not done", f"<p>{html.escape(str(exc))}</p>", status=409)
        word = "Approved" if decided.status == "approved" else "Denied"
        return self.shell(word, f"<p>{word}: {html.escape(approval.tool)}. You can close this page.</p>")


def link_routes(links: ApprovalLinks) -> list[Any]:
    from starlette.routing import Route

    return [
        Route("/e/{approval_id}/{ticket}", links.show, methods=["GET"]),
        Route("/e/{approval_id}/{ticket}/{action}", links.answer, methods=["POST"]),
    ]
