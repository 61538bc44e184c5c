"""What every namespace's tool declarations keep to, checked over the whole catalog.

Arguments are what the caller sent and nothing else: what a call learns on its way (the file
before a delete, the stored files a mail attaches) lives in the tool's per-call facts, which the
gate makes for each call and passes to each of the tool's callables.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_tools.core.tooling import Arguments, ToolSpec
from mcp_tools.servers import CATALOG, load_namespace


def every_tool() -> list[ToolSpec[Any, Any, Any]]:
    return [spec for name in sorted(CATALOG) for spec in load_namespace(name).tools]


def models_within(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    """The model and every model its fields hold (nested arguments such as files.edit's edits)."""
    seen: set[type[BaseModel]] = set()
    waiting = [model]
    while waiting:
        current = waiting.pop()
        if current in seen:
            continue
        seen.add(current)
        yield current
        for field in current.model_fields.values():
            waiting += [kind for kind in _types_in(field.annotation) if issubclass(kind, BaseModel)]


def _types_in(annotation: Any) -> Iterator[type]:
    if isinstance(annotation, type):
        yield annotation
    for inner in getattr(annotation, "__args__", ()):
        yield from _types_in(inner)


def all_argument_models() -> Iterator[type[Arguments]]:
    waiting = list(Arguments.__subclasses__())
    while waiting:
        model = waiting.pop()
        waiting += model.__subclasses__()
        yield model


def test_argument_models_carry_no_per_call_state() -> None:
    tools = every_tool()
    assert len(tools) > 50  # the whole catalog was loaded
    holding = {
        f"{spec.name}: {model.__name__}": sorted(model.__private_attributes__)
        for spec in tools
        for model in models_within(spec.input_model)
        if model.__private_attributes__
    }
    assert holding == {}
    # and no argument model anywhere in the package, used by a tool or not
    loaded = {model.__name__: sorted(model.__private_attributes__) for model in all_argument_models()}
    assert {name: attributes for name, attributes in loaded.items() if attributes} == {}


def positional(function: Callable[..., Any]) -> int:
    """How many positional arguments a callable takes without a default."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = inspect.signature(function).parameters.values()
    return sum(1 for parameter in parameters if parameter.kind in kinds and parameter.default is parameter.empty)


# callable -> how many arguments it takes before the facts: describe(args), precheck(service, args), ...
BEFORE_FACTS = {"describe": 1, "dynamic_risk": 2, "precheck": 2, "prepare": 3, "handler": 3}


@pytest.mark.parametrize("spec", every_tool(), ids=lambda spec: spec.name)
def test_a_tool_with_facts_takes_them_last_in_every_callable_and_one_without_takes_none(
    spec: ToolSpec[Any, Any, Any],
) -> None:
    extra = 0 if spec.facts is None else 1
    for name, before in BEFORE_FACTS.items():
        function = getattr(spec, name)
        if function is not None:
            assert positional(function) == before + extra, f"{spec.name} {name}"
    if spec.facts is not None:
        made, again = spec.facts(), spec.facts()  # the gate makes them with no arguments, one per call
        assert made is not again
