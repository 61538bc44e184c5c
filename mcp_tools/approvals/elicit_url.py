"""URL-mode elicitation (2025-11-25): a high-risk call's approval offered as a link to the approvals
page, for a client that declared `elicitation: {url: {}}` and cannot (or may not) answer a form.

The pending approval is stored and announced as for any out-of-band approval; the client is sent
`elicitation/create` with `mode: "url"` and the link; the call waits for the person's answer (on
the page, or any other channel), sends `notifications/elicitation/complete`, and runs or is refused.

Which link: where a form would be the person's own yes (stdio, or an HTTP token marked
`person_answers_forms`), a single-use link bound to this approval and its principal, which opens
that one approval without a sign-in (`/approvals/e/<id>/<ticket>`); anywhere else the approval's
page (`/approvals/a/<id>`), which asks the browser to be signed in as someone who sees it, so the
link is never worth more to the client than the question itself.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, Protocol

import anyio

from mcp_tools.policy.channels import OutOfBand
from mcp_tools.policy.gate import Answer, Caller, ConfirmationRequest, approval_required
from mcp_tools.state.store import Approval, StateStore


class Composed(Protocol):
    """What a URL-mode asker reads of the composed app (`mcp_tools.composition.app.App`), which
    the approvals package does not import."""

    config: Any
    store: StateStore
    out_of_band: OutOfBand


LINK_PREFIX = "/e/"
MODERN = "2026-07-28"


def link_path(approval_id: str, ticket: str) -> str:
    return f"{LINK_PREFIX}{approval_id}/{ticket}"


def declares_url(ctx: Any) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and elicitation.url is not None


def url_asker(
    ctx: Any, app: Composed, caller: Callable[[], Caller], wire_name: str, trusted: bool
) -> UrlElicitation | None:
    """The URL-mode asker for this request, or None: the client did not declare URL mode, no
    approvals page is configured to link to, or the connection has no back channel (2026-07-28
    connections and stateless HTTP are approved out of band as before).

    `caller` builds who asks (principal, client, progress, transport), read only once an asker is made.
    """
    from mcp_types.version import is_version_at_least

    if not app.out_of_band.page_url or not declares_url(ctx) or not ctx.session.can_send_request:
        return None
    if ctx.protocol_version and is_version_at_least(ctx.protocol_version, MODERN):
        return None
    settings = app.config.policy
    asking = caller()
    return UrlElicitation(
        ctx,
        app.store,
        app.out_of_band,
        ttl_seconds=settings.approval_ttl_seconds,
        wait_seconds=app.out_of_band.wait_seconds or settings.elicitation_timeout_seconds,
        principal=asking.principal,
        wire_name=wire_name,
        transport=asking.transport,
        client=asking.client,
        trusted=trusted,
        progress=asking.progress,
    )


class UrlElicitation:
    """An `Asker` that asks through the approvals page, by URL-mode elicitation."""

    def __init__(
        self,
        ctx: Any,
        store: StateStore,
        out_of_band: OutOfBand,
        *,
        ttl_seconds: float,
        wait_seconds: float,
        principal: str,
        wire_name: str,
        transport: str,
        client: str | None,
        trusted: bool,
        progress: Any = None,
    ) -> None:
        self.ctx = ctx
        self.store = store
        self.out_of_band = out_of_band
        self.ttl = ttl_seconds
        self.wait_seconds = wait_seconds
        self.principal = principal
        self.wire_name = wire_name
        self.transport = transport
        self.client = client
        self.trusted = trusted
        self.progress = progress
        self.channel = f"elicitation-url:{transport}"

    def url_for(self, approval: Approval) -> str:
        from mcp_tools.approvals.card import issue_ticket  # loaded when a link is first made

        page = self.out_of_band.page_url or ""
        if self.trusted:
            return page + link_path(approval.id, issue_ticket(self.store, approval))
        return f"{page}/a/{approval.id}"

    async def ask(self, request: ConfirmationRequest) -> Answer:
        approval = await anyio.to_thread.run_sync(self._stored, request)
        await self.out_of_band.announce(approval, request.message(), self.transport, self.client)
        elicitation_id = secrets.token_urlsafe(16)
        message = f"Open the approvals page to answer: {request.headline()}"
        try:
            result = await self.ctx.session.elicit_url(
                message=message,
                url=await anyio.to_thread.run_sync(self.url_for, approval),
                elicitation_id=elicitation_id,
                related_request_id=self.ctx.request_id,
            )
        except Exception:  # a client that errors instead of answering has not agreed to open it
            self.out_of_band.decisions.withdraw(approval.id)
            return Answer.CANCEL
        if result.action != "accept":
            self.out_of_band.decisions.withdraw(approval.id)
            return Answer.DECLINE if result.action == "decline" else Answer.CANCEL
        verdict = await self._verdict(approval)
        if verdict is None:  # still pending: the answer given later lets the same call run
            raise approval_required(approval, self.wire_name, self.out_of_band.places(approval.id))
        await self._complete(elicitation_id)
        if verdict == "approved" and self.store.consume_approval_id(approval.id) is not None:
            return Answer.ACCEPT
        return Answer.DECLINE if verdict == "denied" else Answer.CANCEL

    def _stored(self, request: ConfirmationRequest) -> Approval:
        return self.store.request_approval(
            tool=request.tool,
            args_sha256=request.args_sha256,
            args_display=request.arguments,
            summary=request.summary,
            risk=request.risk.label,
            principal=self.principal,
            ttl_seconds=self.ttl,
            origin=(self.transport, self.client),
        )

    async def _verdict(self, approval: Approval) -> str | None:
        decisions = self.out_of_band.decisions
        total = self.wait_seconds

        async def tick(elapsed: float) -> None:
            if self.progress is not None:
                left = max(0, round(total - elapsed))
                await self.progress(elapsed, total, f"Waiting for the person to answer {approval.id} ({left} s left)")

        try:
            return await decisions.wait(approval.id, total, tick, self.out_of_band.progress_interval)
        except anyio.get_cancelled_exc_class():
            decisions.withdraw(approval.id)
            raise

    async def _complete(self, elicitation_id: str) -> None:
        try:
            await self.ctx.session.send_elicit_complete(elicitation_id, related_request_id=self.ctx.request_id)
        except Exception:  # a client gone away needs no notice
            return
