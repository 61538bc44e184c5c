"""The gate's stages: one call passes them in order, each about one thing.

The shape is the SDK's server middleware and Starlette's middleware list: one ordered list,
outermost first, that `PolicyGate` composes once per tool (`Chain.of`, leaving out the stages
that do nothing for it, or for a caller without OAuth scopes) and runs every call through
(`PolicyGate.call`). On the way in, each stage `enter`s the call as it stands and either hands it
on, perhaps as a new `Call` with what it learned, or answers with a `Verdict` (a refusal, a
question the person declined, the handler's result: `Run` always answers). On the way out, the
answer passes the stages that `leave` it, innermost first.

| stage | module | way | concern |
| --- | --- | --- | --- |
| `Audit` | `audit` | out | one audit row per call, built from its verdict |
| `Budget` | `outgoing` | out | the result within `[server] max_result_tokens` (not for nested calls) |
| `Scrub` | `outgoing` | out | valid UTF-8, no known secret, no URL credentials (not for nested calls) |
| `Visibility` | `reach` | in | hidden by the policy, outside the sign-in's scopes (the inventory's chain) |
| `Shape` | `arguments` | in | a JSON object, within the size limits |
| `UnicodeText` | `arguments` | in | no lone surrogate in any text |
| `Validate` | `arguments` | in | the tool's input model; the canonical arguments |
| `ArgumentReach` | `reach` | in | an argument acting through a tool that cannot run |
| `Prepare` | `assess` | in | the tool's `prepare` |
| `AssessRisk` | `assess` | in | the effective risk; `deny` |
| `Precheck` | `assess` | in | the tool's `precheck` |
| `Confirm` | `confirm` | in | high risk: ask, or wait for an approval, then look again |
| `Run` | `run` | in | the handler, its output, the medium-risk notice |

What the gate decided is a `Verdict` (`mcp_tools.policy.calls`), an immutable value: the stage
that decides returns it, or hands on a `Call` whose verdict so far says what it learned
(`Call.deciding`), and the audit row is built from the verdict the call ends with. What fails
unexpectedly on the way in is settled as the call then stood (`settle`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.policy.calls import (
    BoundTool,
    Call,
    Caller,
    CallOutcome,
    Verdict,
    failure_outcome,
    internal_error,
    store_unavailable,
)
from mcp_tools.state.store import StateStoreUnavailable

logger = logging.getLogger("mcp_tools.policy")


@runtime_checkable
class Stage(Protocol):
    """One step of a call through the gate (the table above); it enters, or leaves, or both."""

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        """Whether a call of `tool` needs this stage at all (`nested`: made through `ctx.call_tool`;
        `scoped`: by a caller whose OAuth scopes limit what it reaches)."""
        ...


@runtime_checkable
class Entering(Stage, Protocol):
    """A stage on the way in: hands the call on (the same, or a new one) or answers it."""

    async def enter(self, call: Call) -> Call | Verdict: ...


@runtime_checkable
class Leaving(Stage, Protocol):
    """A stage on the way out: the answer as it passes."""

    async def leave(self, call: Call, verdict: Verdict) -> Verdict: ...


class Gateway(Protocol):
    """What a stage may ask of the gate that composed it: the running tools, and a call through
    all the stages again (a handler's `ctx.call_tool`)."""

    tools: dict[str, BoundTool]

    def unreachable(self, name: str) -> ToolFailure | None: ...

    async def call(
        self, tool: BoundTool, name: str, raw_args: Any, caller: Caller, *, via: BoundTool | None = None
    ) -> CallOutcome: ...


@dataclass(frozen=True)
class Chain:
    """The stages one tool's calls pass: in, outermost first; out, innermost first."""

    entering: tuple[Entering, ...]
    leaving: tuple[Leaving, ...]

    @classmethod
    def of(cls, stages: Sequence[Stage], tool: BoundTool, nested: bool, scoped: bool = False) -> Chain:
        used = [stage for stage in stages if stage.applies(tool, nested, scoped)]
        entering = tuple(stage for stage in used if isinstance(stage, Entering))
        leaving = tuple(stage for stage in reversed(used) if isinstance(stage, Leaving))
        return cls(entering, leaving)


def settle(call: Call, exc: Exception) -> Verdict:
    """What went wrong unexpectedly, as the verdict so far of the call as it stood: a
    `ToolFailure` is the answer, a state store out of reach answers `unavailable`, and anything
    else `internal_error` (logged with its traceback)."""
    if isinstance(exc, ToolFailure):
        return call.ends(failure_outcome(exc))
    if isinstance(exc, StateStoreUnavailable):
        logger.warning("%s refused: the state store cannot be reached", call.name)
        return call.ends(failure_outcome(store_unavailable()))
    logger.error("policy checks for %s failed unexpectedly", call.name, exc_info=exc)
    return call.ends(failure_outcome(internal_error(call.name)))
