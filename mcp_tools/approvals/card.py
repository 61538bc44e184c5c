"""The approval card: an MCP App in which the person approves a high-risk call inside the chat.

Offered only to clients that render MCP Apps and cannot be asked with an elicitation form. A
high-risk tool links the card's `ui://` resource; its `approval_required` result carries, in
`_meta` only (never in the text or structured content the model reads), the approval id and a
single-use ticket. The card hands the ticket back to two app-only tools: one shows the pending
approval (the same text every other channel shows), one decides it. The store keeps only the
ticket's sha256, bound to the approval, its principal, tool and argument hash.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp_tools.core.tooling import CallContext, Output, Risk, ToolFailure, ToolSpec
from mcp_tools.policy.decisions import Decisions
from mcp_tools.policy.gate import ConfirmationRequest
from mcp_tools.state.store import Approval, StateStore, TicketRefused, iso_time

CARD_URI = "ui://mcp-tools/approval.html"
APP_MIME_TYPE = "text/html;profile=mcp-app"
META_KEY = "mcp-tools/approval"  # in a result's `_meta`: what the card needs, which the model never sees
TICKET_BYTES = 32  # 256 random bits
MAX_FAILURES = 5  # wrong tickets an approval tolerates before no card can open it
STATIC = Path(__file__).resolve().parent / "static"


class TicketArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    approval_id: str = Field(max_length=64, description="The approval id from the card's tool result.")
    ticket: str = Field(max_length=128, description="The single-use ticket from the card's tool result.")


class DecideArgs(TicketArgs):
    decision: Literal["approve", "deny"]


class ShownApproval(Output):
    approval_id: str
    tool: str
    risk: str
    message: str = Field(description="What the person is asked, exactly as every other channel shows it.")
    expires: str


class Decided(Output):
    approval_id: str
    status: str
    next: str = Field(description="What happens now, in words for the person.")


@dataclass
class CardService:
    store: StateStore
    decisions: Decisions


def ticket_hash(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("utf-8", "surrogatepass")).hexdigest()


def issue_ticket(store: StateStore, approval: Approval) -> str:
    """A fresh ticket for one pending approval; only its hash is stored."""
    ticket = secrets.token_urlsafe(TICKET_BYTES)
    store.issue_ticket(approval, ticket_hash(ticket), ttl_seconds=approval.expires - store.clock())
    return ticket


def confirmation_text(approval: Approval) -> str:
    """The text the person reads, built by the one function every channel uses to ask."""
    request = ConfirmationRequest(
        approval.tool, Risk.parse(approval.risk), approval.summary, approval.args_display, approval.args_sha256
    )
    return request.message()


def _opened(service: CardService, args: TicketArgs, ctx: CallContext, use: bool) -> Approval:
    try:
        return service.store.check_ticket(
            args.approval_id, ticket_hash(args.ticket), ctx.principal, use=use, max_failures=MAX_FAILURES
        )
    except TicketRefused as refused:
        raise ToolFailure(
            "denied_by_policy",
            f"the approval card cannot open {args.approval_id}: {refused}.",
            "Only the person can answer an approval, in the card the host shows them, on the approvals page, "
            "in Telegram or with `mcp-tools approvals approve`.",
        ) from None


async def show(service: CardService, args: TicketArgs, ctx: CallContext) -> ShownApproval:
    approval = _opened(service, args, ctx, use=False)
    return ShownApproval(
        approval_id=approval.id,
        tool=approval.tool,
        risk=approval.risk,
        message=confirmation_text(approval),
        expires=iso_time(approval.expires),
    )


async def decide(service: CardService, args: DecideArgs, ctx: CallContext) -> Decided:
    approval = _opened(service, args, ctx, use=True)
    approve = args.decision == "approve"
    try:
        decided = service.decisions.decide(approval.id, approve, by=f"approval card ({ctx.principal})")
    except (LookupError, ValueError) as exc:
        raise ToolFailure("conflict", f"{approval.id} could not be decided: {exc}") from None
    if approve:
        what = (
            f"Approved. The assistant now calls {approval.tool} again with the same arguments and it runs "
            "(a call that is waiting for this answer continues by itself)."
        )
    else:
        what = f"Denied. {approval.tool} will not run with these arguments; the assistant is told so if it retries."
    return Decided(approval_id=decided.id, status=decided.status, next=what)


SHOW = ToolSpec(
    name="approval.show",
    title="Show a pending approval",
    description="Shows the approval card's pending approval. Only the approval card calls this.",
    input_model=TicketArgs,
    output_model=ShownApproval,
    handler=show,
    risk=Risk.LOW,
    describe=lambda args: f"show approval {args.approval_id}",
    read_only=True,
    open_world=False,
)
DECIDE = ToolSpec(
    name="approval.decide",
    title="Answer a pending approval",
    description="Records the person's answer from the approval card. Only the approval card calls this.",
    input_model=DecideArgs,
    output_model=Decided,
    handler=decide,
    risk=Risk.LOW,
    describe=lambda args: f"{args.decision} approval {args.approval_id}",
    open_world=False,
    destructive=False,
)
CARD_TOOLS = (SHOW, DECIDE)


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@cache
def card_html() -> str:
    """The card: one document, its script and style allowed by hash, nothing else loads or connects."""
    script = (STATIC / "card.js").read_text(encoding="utf-8")
    style = (STATIC / "card.css").read_text(encoding="utf-8")
    policy = card_csp(script, style)
    template = (STATIC / "card.html").read_text(encoding="utf-8")
    return template.replace("{{CSP}}", policy).replace("{{STYLE}}", style).replace("{{SCRIPT}}", script)


def card_csp(script: str, style: str) -> str:
    return (
        f"default-src 'none'; script-src {_sha256_source(script)}; style-src {_sha256_source(style)}; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; frame-src 'none'; object-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def card_resource_meta() -> dict[str, Any]:
    """`_meta.ui` of the resource: no outside domain for anything (the host's most restrictive CSP)."""
    return {"ui": {"csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}}}
