"""Per-call facts at the gate: each call gets its own, from the risk check to the handler.

A tool that declares `facts` gets a fresh object for every call: what `dynamic_risk` and
`precheck` find is what `describe` tells the person and what the handler acts on, and two calls
of the same tool running at once never see each other's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel, Field

from mcp_tools.composition.app import build_app
from mcp_tools.core.tooling import Arguments, CallContext, Namespace, Output, Risk, ToolSpec
from mcp_tools.policy.gate import Caller
from mcp_tools.servers import CATALOG
from tests.harness import make_config

pytestmark = pytest.mark.anyio


class TagArgs(Arguments):
    label: str = Field(max_length=20)


class TagOut(Output):
    seen: list[str]


@dataclass
class TagFacts:
    seen: list[str] = field(default_factory=list)


class Rendezvous:
    """Holds every call in its risk check until `expected` calls are inside it at once."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.arrived = 0
        self.all_in = anyio.Event()

    async def meet(self) -> None:
        self.arrived += 1
        if self.arrived == self.expected:
            self.all_in.set()
        with anyio.fail_after(10):  # a gate that ran the calls one after the other would never get here
            await self.all_in.wait()


async def tag_risk(service: Rendezvous, args: TagArgs, facts: TagFacts) -> Risk:
    facts.seen.append(f"risk:{args.label}")
    await service.meet()
    return Risk.MEDIUM


async def tag_precheck(service: Rendezvous, args: TagArgs, facts: TagFacts) -> None:
    facts.seen.append(f"precheck:{args.label}")


def describe_tag(args: TagArgs, facts: TagFacts) -> str:
    return f"tag {args.label} after {', '.join(facts.seen)}"


async def tag(service: Rendezvous, args: TagArgs, ctx: CallContext, facts: TagFacts) -> TagOut:
    facts.seen.append(f"handler:{args.label}")
    return TagOut(seen=list(facts.seen))


class TagConfig(BaseModel):
    pass


NAMESPACE = Namespace(
    name="tagging",
    description="One tool whose calls leave facts along the way.",
    config_model=TagConfig,
    create=lambda section, environment: Rendezvous(expected=2),
    tools=(
        ToolSpec(
            name="tagging.tag",
            description="Tag something.",
            input_model=TagArgs,
            output_model=TagOut,
            handler=tag,
            risk=Risk.MEDIUM,
            describe=describe_tag,
            dynamic_risk=tag_risk,
            precheck=tag_precheck,
            facts=TagFacts,
        ),
    ),
)


@pytest.fixture
def tagging(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, object]]:
    monkeypatch.setitem(CATALOG, "tagging", __name__)
    return {"tagging": {}}


async def test_two_calls_of_one_tool_at_once_each_see_only_their_own_facts(
    tmp_path: Path, tagging: dict[str, dict[str, object]]
) -> None:
    app = build_app(make_config(tmp_path, tagging))
    outcomes = {}
    async with app.running():
        tool = app.gate.tools["tagging.tag"]

        async def call(label: str) -> None:
            outcomes[label] = await app.gate.call(tool, tool.spec.name, {"label": label}, Caller())

        async with anyio.create_task_group() as group:  # both are inside the risk check together
            group.start_soon(call, "first")
            group.start_soon(call, "second")
    for label in ("first", "second"):
        outcome = outcomes[label]
        assert not outcome.is_error, outcome.text
        assert outcome.structured == {"seen": [f"risk:{label}", f"precheck:{label}", f"handler:{label}"]}
        assert (
            outcome.action
            == f"tag {label} after risk:{label}, precheck:{label}, handler:{label} (tagging.tag, medium risk)"
        )


async def test_a_later_call_starts_with_fresh_facts(tmp_path: Path, tagging: dict[str, dict[str, object]]) -> None:
    app = build_app(make_config(tmp_path, tagging))
    async with app.running():
        tool = app.gate.tools["tagging.tag"]
        tool.service.expected = 1  # no one to wait for
        first = await app.gate.call(tool, tool.spec.name, {"label": "a"}, Caller())
        second = await app.gate.call(tool, tool.spec.name, {"label": "b"}, Caller())
    assert first.structured == {"seen": ["risk:a", "precheck:a", "handler:a"]}
    assert second.structured == {"seen": ["risk:b", "precheck:b", "handler:b"]}
