"""What a call is and what it comes to, as the transports and the gate's stages share them.

A transport builds a `Caller` (who calls, through what, how the person can be asked) and gets a
`CallOutcome` back; `BoundTool` is a tool with its service, wire name and configured risk. On
the gate's own path (`mcp_tools.policy.stages`) a `Call` is the call as it stands between two
stages and a `Verdict` what the gate decided about it: the value each stage returns.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic import BaseModel

from mcp_tools.core.tooling import CallContext, Risk, ToolFailure, ToolSpec
from mcp_tools.policy.display import arguments_text, visible

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class Answer(enum.Enum):
    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class ConfirmationRequest:
    """What the person is asked: the exact tool, its risk and key arguments, and one line of effect."""

    tool: str
    risk: Risk
    summary: str
    arguments: dict[str, Any]
    args_sha256: str

    def headline(self) -> str:
        """The summary as a person reads it: one line, nothing hidden (see `mcp_tools.policy.display`)."""
        return visible(self.summary)

    def details(self) -> str:
        """The tool, its risk and every argument, one per line, each value quoted and escaped."""
        return f"Tool: {self.tool} ({self.risk.label} risk)\nArguments:\n{arguments_text(self.arguments)}"

    def message(self) -> str:
        return f"{self.headline()}\n\n{self.details()}\n\nAllow this?"


@dataclass(frozen=True)
class AskLater:
    """The transport will ask in its own round trip (2026-07-28 input-required results)."""

    payload: Any


class Asker(Protocol):
    """A way to ask the person during the call; absent when the client cannot ask.

    `channel` names it in the audit log (`elicitation:stdio`, `terminal`).
    """

    channel: str

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater: ...


@dataclass(frozen=True)
class Waiting:
    """A call held open until the person answers: the question, and where it waits.

    `approval_id` and `expires` are set when it waits for an out-of-band approval (a channel, the
    approvals page, `mcp-tools approvals approve`); both are None while the client itself asks.
    """

    tool: str
    summary: str
    channel: str  # `elicitation:<transport>`, the asker's channel, or `out_of_band`
    approval_id: str | None = None
    expires: float | None = None


class ConfirmationWatch(Protocol):
    """The seam between the confirmation and a transport that runs calls in the background.

    A `Caller` that carries one hears when its call starts waiting for the person (report the
    call as waiting for input, e.g. a task's `input_required`) and when the wait ends, whatever
    the answer (back to working). With `hold_while_approval_lives`, a call that waits for an
    out-of-band approval waits as long as that approval lives (`policy.approval_ttl_seconds`)
    instead of `[approvals] wait_seconds`, and waits even where no channel announces it.
    """

    hold_while_approval_lives: bool

    async def waiting(self, wait: Waiting) -> None: ...

    async def resumed(self, wait: Waiting) -> None: ...


@dataclass
class Caller:
    """Who is calling and through what; built by the transport adapter."""

    transport: str = "local"
    principal: str = "local"
    asker: Asker | None = None
    client: str | None = None  # the client's own name (clientInfo), shown to the person who approves
    progress: Progress | None = None
    # The tools an OAuth sign-in's scopes reach (None: all); calls made through another tool count too.
    reaches: Callable[[Any], bool] | None = None
    # Calls counted beside the gate (text calls under `calls_per_minute`): None spends one, else
    # the seconds until one fits. MCP bodies are counted before they reach the server.
    spend: Callable[[str], float | None] | None = None
    # Told when the call waits for the person and when it goes on (`ConfirmationWatch`).
    watch: ConfirmationWatch | None = None
    # Builds the transport's asker when a call first needs the person asked (most never do).
    asking: Callable[[], Asker | None] | None = None

    def asker_now(self) -> Asker | None:
        """The asker, built now if the transport left it to be built when needed."""
        if self.asker is None and self.asking is not None:
            self.asker, self.asking = self.asking(), None
        return self.asker


@dataclass
class BoundTool:
    """A tool together with its service, its wire name and its configured risk."""

    spec: ToolSpec[Any, Any, Any]
    service: Any
    wire_name: str
    configured_risk: Risk
    # arguments left out of the listed schemas: they act through a tool the policy hides (`reaches`),
    # or the configuration has no use for them (`Namespace.withheld`; a result field of the name goes too)
    withheld: tuple[str, ...] = ()

    def listed_schemas(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The input and output JSON schemas as listed: the withheld arguments left out, and result
        fields of the same names too, except where the argument reaches another tool."""
        inputs = self.spec.input_model.model_json_schema()
        outputs = self.spec.output_model.model_json_schema(mode="serialization")
        for option in self.withheld:
            inputs.get("properties", {}).pop(option, None)
            if option in inputs.get("required", []):
                inputs["required"] = [name for name in inputs["required"] if name != option]
            if option not in self.spec.reaches:
                outputs.get("properties", {}).pop(option, None)
        return inputs, outputs


@dataclass
class CallOutcome:
    """The result in transport-neutral form."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False
    notice: str | None = None  # for the model: what was done, and to tell the user
    action: str | None = None  # for a person: the same action in a line (`mcp-tools call` prints it)
    ask_later: AskLater | None = None
    images: list[tuple[str, str]] = field(default_factory=list)  # (base64, MIME type): MCP image content

    @property
    def error(self) -> dict[str, Any] | None:
        return self.structured.get("error") if self.is_error and self.structured else None


class DeferredQuestion(Exception):
    """A nested call's question waits for the transport's round trip; the outer call answers with it."""

    def __init__(self, ask_later: AskLater) -> None:
        super().__init__("a confirmation waits for the client's answer")
        self.ask_later = ask_later


def arguments_digest(tool: str, arguments: dict[str, Any], seen: tuple[str, ...] = ()) -> str:
    """sha256 over the tool name, its canonical JSON arguments and what the person was shown
    (`seen`: the summary and the target's version): what an approval covers."""
    canonical = json.dumps([arguments, *seen], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{tool}\n{canonical}".encode()).hexdigest()


def failure_outcome(failure: ToolFailure) -> CallOutcome:
    error = failure.as_dict()
    text = f"Error ({failure.kind}): {failure.message}"
    if failure.hint:
        text += f"\nHint: {failure.hint}"
    return CallOutcome(text=text, structured={"error": error}, is_error=True)


def store_unavailable() -> ToolFailure:
    return ToolFailure(
        "unavailable",
        "the server cannot reach its state store (approvals and the audit log) right now; nothing was done",
        "try the same call again in a minute",
    )


def internal_error(tool: str) -> ToolFailure:
    return ToolFailure(
        "internal_error",
        f"{tool} failed unexpectedly; the details are in the server log.",
        "Tell the person; retrying the same call is unlikely to help.",
    )


class Decision(enum.Enum):
    """The audit row's `decision`."""

    RAN = "ran"  # nothing stood in the way
    CONFIRMED = "confirmed"  # the person said yes in the client
    APPROVED_OUT_OF_BAND = "approved_out_of_band"  # an approval given on a channel or the command line
    APPROVAL_REQUIRED = "approval_required"  # an approval is pending
    DECLINED = "declined"  # the person said no
    DENIED = "denied"  # the policy, the caller's reach or the arguments refused it
    PRECHECK_FAILED = "precheck_failed"  # the tool's own checks refused it; nobody was asked
    WITHDRAWN = "withdrawn"  # the client cancelled while the person was being asked


@dataclass(frozen=True)
class Verdict:
    """What the gate decided about one call, and why: everything its audit row says of it.

    `outcome` is the answer, set once the call has one; `args` is what the row records of the
    arguments (the canonical ones once validated, nothing of arguments refused for their size).
    """

    decision: Decision = Decision.RAN
    args: dict[str, Any] = field(default_factory=dict)
    risk: Risk | None = None
    approval_id: str | None = None
    answered_by: str | None = None
    outcome: CallOutcome | None = None

    @property
    def ran(self) -> bool:
        """Whether the handler may have run (what an audit row that cannot be stored must keep)."""
        return self.decision in (Decision.RAN, Decision.CONFIRMED, Decision.APPROVED_OUT_OF_BAND)


@dataclass(frozen=True)
class Call:
    """One call as it stands between two stages; a stage that learns something passes on a new one."""

    tool: BoundTool
    name: str  # the tool's canonical name
    caller: Caller
    raw_args: Any
    started: float  # time.perf_counter() when the gate took it
    via: BoundTool | None = None  # the tool whose handler made this call (`ctx.call_tool`)
    verdict: Verdict = field(default_factory=Verdict)  # so far
    args: Any = None  # the validated input model
    context: CallContext | None = None
    facts: Any = None  # what this call learns on its way; never shared with another call
    notices: list[str] = field(default_factory=list)  # of medium-risk tools this call ran through ctx.call_tool

    @property
    def wire_name(self) -> str:
        """The tool to call again after an approval: the outer one for a nested call."""
        return self.via.wire_name if self.via is not None else self.tool.wire_name

    @property
    def model(self) -> BaseModel:
        assert isinstance(self.args, BaseModel), "a stage before Validate needs the arguments"
        return self.args

    def deciding(self, **verdict: Any) -> Call:
        """The call handed on with its verdict so far changed (`decision=`, `risk=`, ...)."""
        return replace(self, verdict=replace(self.verdict, **verdict))

    def ends(self, outcome: CallOutcome, **verdict: Any) -> Verdict:
        """The verdict with this answer (and any change to what was decided)."""
        return replace(self.verdict, outcome=outcome, **verdict)

    def refused(self, failure: ToolFailure, decision: Decision = Decision.DENIED, **verdict: Any) -> Verdict:
        return self.ends(failure_outcome(failure), decision=decision, **verdict)
