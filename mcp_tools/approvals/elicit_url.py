"""URL-mode elicitation (2025-11-25 and 2026-07-28): a high-risk call's approval offered as a link to the approvals
page, for a client that declared `elicitation: {url: {}}` and cannot (or may not) answer a form.

The pending approval is stored and announced as for any out-of-band approval; the client is sent
`elicitation/create` with `mode: "url"` and the link; the call waits for the person's answer (on
the page, or any other channel), sends `notifications/elicitation/complete`, and runs or is refused.

Which link: where a form would be the person's own yes (stdio, or an HTTP token marked
`person_answers_forms`), a single-use link bound to this approval and its principal, which opens
that one approval without a sign-in (`/approvals/e/<id>/<ticket>`); anywhere else the approval's
page (`/approvals/a/<id>`), which asks the browser to be signed in as someone who sees it, so the
link is never worth more to the client than the question itself.

2026-07-28 has no server-to-client requests: the call answers an `InputRequiredResult` whose
`inputRequests` hold `elicitation/create` with `mode: "url"` and the link (the same link as on
2025-11-25: single-use where a form would be the person's yes, else the approval's page), with
sealed `requestState` naming the call, the principal, the approval and a nonce. The client asks
the person, opens the link, and retries the call with the answer. An `accept` is consent to open
the link, not the person's yes: the retried call waits for the answer on the page (or any other
channel) up to `[approvals] wait_seconds`, then runs, is refused, or answers `approval_required`
while the approval stays pending (the identical call later runs once it is approved). A decline
or cancel withdraws the approval. A nonce counts once, so a retry cannot be replayed.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any, Protocol

import anyio
import mcp_types as types

from mcp_tools.approvals.retry import claimed_state
from mcp_tools.policy.channels import OutOfBand
from mcp_tools.policy.gate import Answer, AskLater, Caller, ConfirmationRequest, approval_required
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
    approvals page is configured to link to, or a 2025-era connection has no back channel
    (stateless HTTP is approved out of band as before). On 2026-07-28 the link is an input request
    (`InputRequiredUrlElicitation`).

    `caller` builds who asks (principal, client, progress, transport), read only once an asker is made.
    """
    from mcp_types.version import is_version_at_least

    modern = bool(ctx.protocol_version) and is_version_at_least(ctx.protocol_version, MODERN)
    if not app.out_of_band.page_url or not declares_url(ctx) or not (modern or ctx.session.can_send_request):
        return None
    settings = app.config.policy
    asking = caller()
    kind = InputRequiredUrlElicitation if modern else UrlElicitation
    return kind(
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


URL_KEY = "approve-url"


class InputRequiredUrlElicitation(UrlElicitation):
    """An `Asker` that offers the approvals page's link through an `InputRequiredResult` round trip."""

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater:  # type: ignore[override]
        retried = await self._retried(request)
        if retried is None:
            return await self._offer(request)
        approval_id, action = retried
        approval = await anyio.to_thread.run_sync(self.store.get_approval, approval_id)
        if approval is None or approval.principal != self.principal or approval.args_sha256 != request.args_sha256:
            return Answer.CANCEL
        if action != "accept":
            self.out_of_band.decisions.withdraw(approval.id)
            return Answer.DECLINE if action == "decline" else Answer.CANCEL
        verdict = await self._verdict(approval)
        if verdict is None:  # still pending: the answer given later lets the same call run
            raise approval_required(approval, self.wire_name, self.out_of_band.places(approval.id))
        if verdict == "approved" and self.store.consume_approval_id(approval.id) is not None:
            return Answer.ACCEPT
        return Answer.DECLINE if verdict == "denied" else Answer.CANCEL

    async def _offer(self, request: ConfirmationRequest) -> AskLater:
        approval = await anyio.to_thread.run_sync(self._stored, request)
        await self.out_of_band.announce(approval, request.message(), self.transport, self.client)
        link = await anyio.to_thread.run_sync(self.url_for, approval)
        elicit = types.ElicitRequest(
            params=types.ElicitRequestURLParams(
                message=f"Open the approvals page to answer: {request.headline()}",
                url=link,
                elicitation_id=secrets.token_urlsafe(16),
            )
        )
        state = {
            "tool": request.tool,
            "args": request.args_sha256,
            "principal": self.principal,
            "approval": approval.id,
            "nonce": secrets.token_urlsafe(16),
        }
        return AskLater(types.InputRequiredResult(input_requests={URL_KEY: elicit}, request_state=json.dumps(state)))

    async def _retried(self, request: ConfirmationRequest) -> tuple[str, str] | None:
        """The approval and the client's answer of a retry that carries ours, else None (ask afresh)."""
        params = self.ctx.params if isinstance(self.ctx.params, dict) else {}
        responses = params.get("inputResponses")
        sealed = params.get("requestState")  # unsealed by the SDK's boundary: ours, unchanged
        if not isinstance(responses, dict) or URL_KEY not in responses:
            return None
        state = await claimed_state(self.store, sealed, request, self.principal, self.ttl, named=("approval",))
        if state is None:
            return None
        response: Any = responses[URL_KEY]
        action = response.get("action") if isinstance(response, dict) else None
        return state["approval"], action if action in ("accept", "decline") else "cancel"
