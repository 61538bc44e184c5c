"""A call's arguments before its tool sees them: their shape bounded, their text valid Unicode,
their errors in words; the stages `Shape`, `UnicodeText` and `Validate`.

Every step is linear in the arguments and bounded: a call with absurdly many names, or nested
absurdly deep, is refused before validation says so (`shape_refusal`); and a validation error
describes its first few problems only, each found once (`describe_validation_error`), however
many the arguments hold. Both run on the event loop that serves every other client.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_tools.core.tooling import ToolFailure, ToolSpec
from mcp_tools.policy.calls import BoundTool, Call, Verdict
from mcp_tools.policy.display import visible
from mcp_tools.policy.unicode import not_unicode_failure
from mcp_tools.util.text import not_unicode

# No tool takes more than a few dozen arguments; an object of settings or headers a few hundred.
MAX_ARGUMENT_NAMES = 10_000  # object keys in all of a call's arguments, at every depth
MAX_ARGUMENT_DEPTH = 64  # objects and lists inside one another
MAX_ARGUMENT_VALUES = 1_000_000  # values of any kind (list items, strings, numbers) in all
DESCRIBED_PROBLEMS = 8


def shape_refusal(name: str, arguments: dict[str, Any]) -> ToolFailure | None:
    """Why `arguments` are refused before anything else looks at them, or None: more names, values
    or nesting than any call takes. One pass, without recursion."""
    names = values = 0
    pending: list[tuple[Any, int]] = [(arguments, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children: Any = value.values()
            names += len(value)
        elif isinstance(value, list):
            children = value
        else:
            continue
        values += len(value)
        if depth > MAX_ARGUMENT_DEPTH:
            return ToolFailure(
                "invalid_arguments",
                f"{name}'s arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep: nothing ran",
                "send the arguments the tool's input schema describes",
            )
        if names > MAX_ARGUMENT_NAMES or values > MAX_ARGUMENT_VALUES:
            return ToolFailure(
                "invalid_arguments",
                f"{name}'s arguments hold more than {MAX_ARGUMENT_NAMES:,} names or {MAX_ARGUMENT_VALUES:,} values "
                "in all: nothing ran, and the names were not read",
                "send only the arguments the tool's input schema lists; split a large piece of work into several calls",
            )
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return None


def describe_validation_error(tool: ToolSpec[Any, Any, Any], exc: ValidationError) -> str:
    """Argument errors in words a model can act on: `files.edit needs edits[0].old_string`.

    The first `DESCRIBED_PROBLEMS` problems are described, the rest counted: each described one
    looks at the others once at most, so the cost does not grow with their number squared."""
    errors = exc.errors(include_url=False)
    parts: list[str] = []
    listed: set[tuple[int | str, ...]] = set()  # places whose accepted names were already listed
    missing = _MissingByPlace(errors)
    for error in errors[:DESCRIBED_PROBLEMS]:
        loc = _format_loc(error["loc"])
        kind = error["type"]
        if kind == "missing":
            parts.append(f"{tool.name} needs {loc}")
        elif kind == "extra_forbidden":
            parts.append(f"{tool.name} does not take {loc}{_accepted(tool.input_model, error['loc'], missing, listed)}")
        else:
            message = error["msg"].removeprefix("Value error, ")
            parts.append(f"{loc}: {message}" if loc else message)
    more = len(errors) - DESCRIBED_PROBLEMS
    return "; ".join(parts) + ("" if more <= 0 else f"; and {more} more problems")


class _MissingByPlace:
    """The required names missing at each place, gathered in one pass the first time one is asked for."""

    def __init__(self, errors: list[Any]) -> None:
        self.errors = errors
        self.places: dict[tuple[int | str, ...], list[str]] | None = None

    def at(self, place: tuple[int | str, ...]) -> list[str]:
        if self.places is None:
            self.places = {}
            for error in self.errors:
                if error["type"] == "missing":
                    self.places.setdefault(tuple(error["loc"][:-1]), []).append(str(error["loc"][-1]))
        return self.places.get(tuple(place), [])


def _accepted(
    model: type[BaseModel], loc: tuple[int | str, ...], missing: _MissingByPlace, listed: set[tuple[int | str, ...]]
) -> str:
    """For an unknown argument: the closest accepted one (with what it holds) and the whole list,
    once per place (`listed` holds the places already listed in this message)."""
    from mcp_tools.util.suggest import closest, closest_argument

    where = _model_at(model, loc[:-1])
    if where is None:
        return ""
    fields = {(info.alias or name): info for name, info in where.model_fields.items()}
    given = str(loc[-1])
    guesses = closest_argument(given, fields)
    if not guesses:  # the one required argument left missing at the same place is the likely meaning
        left_out = missing.at(loc[:-1])
        guesses = (closest(given, left_out) or left_out)[:1]
    guess = ""
    if guesses:
        info = fields[guesses[0]]
        what = _kind_of(info.annotation)
        about = f": {info.description.rstrip('.')}" if info.description else ""
        guess = f"; did you mean {guesses[0]} ({what}{about})?"
    if not fields or loc[:-1] in listed:
        return guess
    listed.add(loc[:-1])
    return f"{guess} It takes {', '.join(fields)}" if guess else f"; it takes {', '.join(fields)}"


def _unwrap(annotation: Any) -> list[Any]:
    """The types an annotation allows (Optional and unions spread out)."""
    import types
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [part for arg in typing.get_args(annotation) for part in _unwrap(arg) if part is not type(None)]
    return [annotation]


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model that validates the value at `loc` inside `model`'s input, if one does."""
    import typing

    current: list[Any] = [model]
    for part in loc:
        following: list[Any] = []
        for candidate in current:
            if isinstance(part, int):
                origin = typing.get_origin(candidate)
                if origin in (list, tuple, set, frozenset):
                    following += [arg for item in typing.get_args(candidate) for arg in _unwrap(item)]
            elif isinstance(candidate, type) and issubclass(candidate, BaseModel):
                for name, info in candidate.model_fields.items():
                    if part in (name, info.alias):
                        following += _unwrap(info.annotation)
        current = following
    return next((c for c in current if isinstance(c, type) and issubclass(c, BaseModel)), None)


def _kind_of(annotation: Any) -> str:
    import typing

    kinds = []
    for part in _unwrap(annotation):
        origin = typing.get_origin(part) or part
        if origin in (list, tuple, set, frozenset):
            kinds.append("a list")
        elif origin is dict or (isinstance(origin, type) and issubclass(origin, BaseModel)):
            kinds.append("an object")
        elif origin is bool:
            kinds.append("true or false")
        elif origin is int:
            kinds.append("an integer")
        elif origin is float:
            kinds.append("a number")
        elif origin is str:
            kinds.append("a string")
    return " or ".join(dict.fromkeys(kinds)) or "a value"


def _format_loc(loc: tuple[int | str, ...]) -> str:
    """`edits[0].old`, each name made visible: a key is the model's own text, and it is echoed."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = visible(str(part), 80)
            out += f".{name}" if out else name
    return out


class Shape:
    """Arguments are a JSON object within the size limits (`shape_refusal`);
    the audit row keeps nothing of arguments refused for their size."""

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return True

    async def enter(self, call: Call) -> Call | Verdict:
        if not isinstance(call.raw_args, dict):
            return call.refused(ToolFailure("invalid_arguments", f"{call.name} takes a JSON object of arguments"))
        too_large = shape_refusal(call.name, call.raw_args)
        if too_large is not None:
            return call.refused(too_large, args={})
        return call


class UnicodeText:
    """No text in the arguments holds a lone surrogate (which no UTF-8 text can hold); the
    answer names where it sits, and the audit row keeps nothing of them."""

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return True

    async def enter(self, call: Call) -> Call | Verdict:
        broken = not_unicode(call.raw_args)
        if broken is not None:
            return call.refused(not_unicode_failure(broken), args={})
        return call


class Validate:
    """The arguments as the tool's input model, or a refusal that says what to fix; from here on
    the audit row records the canonical arguments."""

    def applies(self, tool: BoundTool, nested: bool, scoped: bool = False) -> bool:
        return True

    async def enter(self, call: Call) -> Call | Verdict:
        spec = call.tool.spec
        try:
            args = spec.input_model.model_validate(call.raw_args)
        except ValidationError as exc:
            return call.refused(ToolFailure("invalid_arguments", describe_validation_error(spec, exc)))
        canonical = args.model_dump(mode="json", by_alias=True)  # what an approval's digest and the audit row cover
        validated = replace(call, args=args, facts=spec.new_facts(), verdict=replace(call.verdict, args=canonical))
        return validated
