"""The gate's stages: one call passes them in order, each about one thing.

The shape is the SDK's server middleware and Starlette's middleware list: a stage takes the call
as it stands and `call_next`, the rest of the chain; it either answers itself (a refusal, a
question the person declined) or hands on the call, perhaps with what it learned, and gets the
rest's answer back to pass up (the result stages change it on the way out). Listed outermost
first (`PolicyGate` composes them, once per tool, leaving out those that do nothing for it):

| stage | module | concern |
| --- | --- | --- |
| `Audit` | `audit` | one audit row per call, built from the verdict the rest returns |
| `Budget` | `outgoing` | the result within `[server] max_result_tokens` (not for nested calls) |
| `Scrub` | `outgoing` | valid UTF-8, no known secret, no URL credentials (not for nested calls) |
| `Visibility` | `checks` | hidden by the policy, outside the sign-in's scopes |
| `Shape` | `checks` | a JSON object, within the size limits |
| `UnicodeText` | `checks` | no lone surrogate in any text |
| `Validate` | `checks` | the tool's input model; the canonical arguments |
| `ArgumentReach` | `checks` | an argument acting through a tool that cannot run |
| `Prepare` | `assess` | the call's context and facts; the tool's `prepare` |
| `AssessRisk` | `assess` | the effective risk; `deny` |
| `Precheck` | `assess` | the tool's `precheck` |
| `Confirm` | `confirm` | high risk: ask, or wait for an approval, then look again |
| `Run` | `run` | the handler, its output, the medium-risk notice |

What the gate decided is a `Verdict`, an immutable value: each stage returns one, and one that
hands the call on says what it learned in a new `Call` (`Call.deciding`), so the verdict the
audit row is built from is the one the deciding stage returned. A stage settles what goes wrong
in its own work (`settle`); nothing raises past it but cancellation and `DeferredQuestion`.
"""

from __future__ import annotations

import enum
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic import BaseModel

from mcp_tools.policy.calls import (
    BoundTool,
    Caller,
    CallOutcome,
    failure_outcome,
    internal_error,
    store_unavailable,
)
from mcp_tools.policy.store import StateStoreUnavailable
from mcp_tools.tooling import CallContext, Risk, ToolFailure

logger = logging.getLogger("mcp_tools.policy")


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
    def answer(self) -> CallOutcome:
        assert self.outcome is not None, "a stage returned a verdict without an answer"
        return self.outcome

    @property
    def ran(self) -> bool:
        """Whether the handler may have run (what an audit row that cannot be stored must keep)."""
        return self.decision in (Decision.RAN, Decision.CONFIRMED, Decision.APPROVED_OUT_OF_BAND)


@dataclass(frozen=True)
class Call:
    """One call as it stands between two stages; a stage that learns something passes on a new one."""

    tool: BoundTool
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
    def name(self) -> str:
        return self.tool.spec.name

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


CallNext = Callable[[Call], Awaitable[Verdict]]


class Stage(Protocol):
    """One step of the gate: `(call, call_next) -> Verdict`."""

    def applies(self, tool: BoundTool, nested: bool) -> bool:
        """Whether a call of `tool` needs this stage at all (`nested`: made through `ctx.call_tool`)."""
        ...

    async def handle(self, call: Call, call_next: CallNext) -> Verdict: ...


class Gateway(Protocol):
    """What a stage may ask of the gate that composed it: the running tools, and a call through
    the whole chain again (a handler's `ctx.call_tool`)."""

    tools: dict[str, BoundTool]

    def unreachable(self, name: str) -> ToolFailure | None: ...

    async def call(
        self, tool: BoundTool, name: str, raw_args: Any, caller: Caller, *, via: BoundTool | None = None
    ) -> CallOutcome: ...


def compose(stages: Sequence[Stage]) -> CallNext:
    """The chain, outermost first; the last stage answers without calling on."""

    async def end(call: Call) -> Verdict:
        raise RuntimeError(f"no stage answered the call of {call.name}")

    chain: CallNext = end
    for stage in reversed(stages):
        chain = functools.partial(stage.handle, call_next=chain)
    return chain


def settle(call: Call, exc: Exception, decision: Decision | None = None) -> Verdict:
    """What went wrong in a stage's own work, as the verdict so far: a `ToolFailure` is the
    answer (under `decision` when given), a state store out of reach answers `unavailable`, and
    anything else `internal_error` (logged with its traceback)."""
    if isinstance(exc, ToolFailure):
        return call.ends(failure_outcome(exc), **({"decision": decision} if decision else {}))
    if isinstance(exc, StateStoreUnavailable):
        logger.warning("%s refused: the state store cannot be reached", call.name)
        return call.ends(failure_outcome(store_unavailable()))
    logger.error("policy checks for %s failed unexpectedly", call.name, exc_info=exc)
    return call.ends(failure_outcome(internal_error(call.name)))
