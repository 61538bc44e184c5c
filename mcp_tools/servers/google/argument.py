"""The `account` argument of every Google tool, added here once rather than in each declaration.

`with_accounts(TOOLS)` gives each tool an input model with an optional `account` (a label or an
address) and an output model with `account` (the account that answered). Each hook of the tool
runs with the namespace's service for that account (`GoogleService.for_account`) and with the
arguments in the tool's own model, so a handler never sees the argument. With one account signed
in, `withheld` leaves `account` out of the listed schemas and out of every result, and the
confirmation lines read as they always have: the tool list is what it was before accounts existed.
With several, each result and each line the person confirms names the account acting.

Each namespace says which of its tools merge every account's hits (`merged`) and which open an id
found in any account (`found_by_id`): this module names no tool and knows no namespace's models.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from mcp_tools.core.tooling import CallContext, Risk, ToolFailure, ToolSpec
from mcp_tools.servers.google.config import ALL_ACCOUNTS
from mcp_tools.servers.google.merge import Merged, result_as

ARGUMENT = "account"
UNLISTED: Any = SkipJsonSchema[str | None]  # type: ignore[misc]  # in a result, never in its schema


_ACTING: dict[int, Acting] = {}  # the call's arguments (by id) -> the account it acts as, while they live


@dataclass(frozen=True)
class Acting:
    """The account one call acts as: its label, how a person reads it, and the service for it."""

    label: str | None  # None: a backend without Google accounts (calendar over CalDAV)
    shown: str
    several: bool  # the tool list names accounts, so results and confirmations do too
    service: Any
    every: bool = False  # `account: "all"`
    plans: list[Any] = field(default_factory=list)  # with `every`: each account's part (`merge.Plan`)


_MADE: dict[Any, type[BaseModel]] = {}  # (own model, variant) -> the model with `account`
_OWN: dict[type[BaseModel], type[BaseModel]] = {}  # a model with `account` -> the tool's own


def input_model(model: type[BaseModel]) -> type[BaseModel]:
    """The tool's arguments plus `account` (same name, title and description as the tool's own).
    Built once per model."""
    model = _OWN.get(model, model)
    found = _MADE.get((model, "input"))
    if found is not None:
        return found
    namespace = {
        "__module__": model.__module__,
        "__qualname__": model.__qualname__,
        "__doc__": model.__doc__,
        "__annotations__": {ARGUMENT: str},
        ARGUMENT: Field(default=""),  # listed as {"type": "string"}: every character is paid on every tool
    }
    meta: Any = type(model)  # pydantic's model metaclass: a subclass built like a class statement
    made: type[BaseModel] = meta(model.__name__, (model,), namespace)
    _MADE[(model, "input")], _OWN[made] = made, model
    return made


def output_model(model: type[BaseModel], hits: tuple[str, type[BaseModel]] | None = None) -> type[BaseModel]:
    """The tool's result plus `account` (absent with one account); `hits` names a list field whose
    items say their account too (a merged answer of every account).

    `account` is in every result that several accounts could have answered, but not in the output
    schema: the listed definitions stay within the context budget with several accounts, and a
    listed output schema admits fields it does not name."""
    model = _OWN.get(model, model)
    found = _MADE.get((model, "output", hits))
    if found is not None:
        return found
    annotations: dict[str, Any] = {ARGUMENT: UNLISTED}
    fields: dict[str, Any] = {ARGUMENT: Field(default=None, exclude_if=lambda value: value is None)}
    if hits is not None:
        name, item = hits
        labelled = _labelled_item(item)
        annotations[name] = list[labelled]  # type: ignore[valid-type]
        fields[name] = Field(default_factory=list, description=model.model_fields[name].description)
    namespace = {
        "__module__": model.__module__,
        "__qualname__": model.__qualname__,
        "__doc__": model.__doc__,
        "__annotations__": annotations,
        **fields,
    }
    meta: Any = type(model)  # pydantic's model metaclass: a subclass built like a class statement
    made: type[BaseModel] = meta(model.__name__, (model,), namespace)
    _MADE[(model, "output", hits)], _OWN[made] = made, model
    return made


def _labelled_item(model: type[BaseModel]) -> type[BaseModel]:
    namespace = {
        "__module__": model.__module__,
        "__qualname__": model.__qualname__,
        "__doc__": model.__doc__,
        "__annotations__": {ARGUMENT: UNLISTED},
        ARGUMENT: Field(default=None, exclude_if=lambda value: value is None),
    }
    meta: Any = type(model)  # pydantic's model metaclass: a subclass built like a class statement
    made: type[BaseModel] = meta(model.__name__, (model,), namespace)
    return made


def own_arguments(spec: ToolSpec[Any, Any, Any], args: Any) -> Any:
    """The call's arguments in the tool's own model (without `account`)."""
    model = spec.input_model
    if type(args) is model:
        return args
    values = {name: getattr(args, name) for name in model.model_fields}
    return model.model_construct(_fields_set=set(args.model_fields_set) - {ARGUMENT}, **values)


def acting(
    spec: ToolSpec[Any, Any, Any],
    service: Any,
    args: Any,
    merged: Merged | None = None,
    merging: tuple[str, ...] = (),
) -> Acting:
    """The account this call acts as (resolved once per call and kept on its arguments); `merged`
    says how the tool merges every account's answers, `merging` names the namespace's tools that do."""
    found = _ACTING.get(id(args))
    if found is not None:
        return found
    from mcp_tools.servers.google.service import GoogleService

    wanted = getattr(args, ARGUMENT, None)
    if not isinstance(service, GoogleService):
        if wanted:
            raise ToolFailure(
                "invalid_arguments",
                f"{spec.namespace} does not use a Google account here, so account cannot be chosen",
                "leave account out",
            )
        found = Acting(None, "", False, service)
    else:
        found = _google_acting(spec, service, wanted, own_arguments(spec, args), merged, merging)
    _ACTING[id(args)] = found
    weakref.finalize(args, _ACTING.pop, id(args), None)  # forgotten with the call's arguments
    return found


def acting_of(args: Any) -> Acting | None:
    """The account a call acts as, once its hooks resolved it (None before, or for another tool)."""
    return _ACTING.get(id(args))


def labels_of(args: Any) -> list[str]:
    """`ToolSpec.accounts` of a Google tool: the labels a call acts as (each account of an
    `account: "all"` call; none before its hooks ran, or on a backend without Google accounts)."""
    who = acting_of(args)
    if who is None or who.label is None:
        return []
    if who.every:
        return [plan.label for plan in who.plans]
    return [who.label]


def _google_acting(
    spec: ToolSpec[Any, Any, Any],
    service: Any,
    wanted: str | None,
    own: Any,
    merged: Merged | None,
    merging: tuple[str, ...],
) -> Acting:
    from mcp_tools.servers.google import accounts
    from mcp_tools.servers.google.policy import refuse_if_read_only

    config, env = service.google_config, service.env
    listed = service.listed_several if service.listed_several is not None else accounts.several(config, env)
    if config.service_account_file is not None:
        if wanted and wanted.strip().lower() not in ("default", (config.subject or "").lower()):
            raise ToolFailure(
                "invalid_arguments",
                f"this server acts as {config.subject} (a service account); account cannot name another",
                "leave account out",
            )
        return Acting("default", config.subject or "", False, service)
    if wanted is not None and wanted.strip().lower() == ALL_ACCOUNTS:
        from mcp_tools.servers.google.merge import plans

        if merged is None:
            where = ", ".join(merging) if merging else "the tools that search or list"
            raise ToolFailure(
                "invalid_arguments",
                f'{spec.name} acts as one account at a time; account "all" is for {where}',
                "name one account",
            )
        return Acting(ALL_ACCOUNTS, "every account", listed, service, True, plans(spec, merged, service, own))
    from mcp_tools.servers.google import principals

    principal = principals.holder(env)
    if principal != principals.OWNER and not principals.reachable(config, env, principal):
        raise principals.not_connected(config, env, principal, service.scopes)
    label = accounts.resolve(config, env, wanted)
    refuse_if_read_only(config, label, spec.name, spec.read_only)
    return Acting(label, accounts.shown(config, env, label), listed, service.for_account(label))


def named(line: str, who: Acting) -> str:
    """The line a person confirms, naming the account that acts when there are several."""
    if not who.shown or not (who.several or who.every):
        return line
    if line.startswith("Send email from "):  # gmail.send's confirmation names the sender on its first line
        _, newline, rest = line.partition("\n")
        return f"Send email from {who.shown}{newline}{rest}"
    for verb in ("send email ", "send draft ", "save a Gmail draft "):
        if line.startswith(verb):
            return f"{verb}from {who.shown} {line[len(verb) :]}"
    return f"as {who.shown}: {line}"


@dataclass(frozen=True)
class AccountSpec(ToolSpec[Any, Any, Any, Any]):
    """A Google tool's spec whose models gain `account` when first asked for, not at import: building
    a pydantic class for each of some forty tools would be paid by every start, and a server with one
    account only lists them.

    `merged`: how `account: "all"` merges every account's answers (None: one account at a time).
    `found_by_id`: a reading tool that opens an id another
    tool returned; without `account` it asks the account the id came from (the default first, then
    the others), so it may leave the argument out even with several accounts."""

    merged: Merged | None = field(default=None, hash=False)
    found_by_id: bool = False

    # the models are properties over the declared fields, as in ToolSpec's own `__init__`
    @property  # type: ignore[misc]
    def input_model(self) -> type[BaseModel]:
        made: type[BaseModel] | None = self.__dict__.get("_input_made")
        if made is None:
            made = input_model(self.__dict__["_input_own"])
            self.__dict__["_input_made"] = made
        return made

    @input_model.setter
    def input_model(self, model: type[BaseModel]) -> None:
        self.__dict__["_input_own"] = _OWN.get(model, model)
        self.__dict__.pop("_input_made", None)

    @property  # type: ignore[misc]
    def output_model(self) -> type[BaseModel]:
        made: type[BaseModel] | None = self.__dict__.get("_output_made")
        if made is None:
            merged = self.merged
            hits = (merged.hits, merged.item) if merged is not None else None
            made = output_model(self.__dict__["_output_own"], hits)
            self.__dict__["_output_made"] = made
        return made

    @output_model.setter
    def output_model(self, model: type[BaseModel]) -> None:
        self.__dict__["_output_own"] = _OWN.get(model, model)
        self.__dict__.pop("_output_made", None)


def with_account(
    spec: ToolSpec[Any, Any, Any],
    merged: Merged | None = None,
    found_by_id: bool = False,
    merging: tuple[str, ...] = (),
) -> ToolSpec[Any, Any, Any]:
    """One tool with the `account` argument; its own hooks run unchanged for the chosen account."""
    made: AccountSpec | None = None

    def outputs_of() -> Any:
        assert made is not None
        return made.output_model

    async def prepare(service: Any, args: Any, ctx: CallContext, *facts: Any) -> None:
        who = acting(spec, service, args, merged, merging)
        if spec.prepare is not None and not who.every:
            await spec.prepare(who.service, own_arguments(spec, args), ctx, *facts)

    async def handler(service: Any, args: Any, ctx: CallContext, *facts: Any) -> Any:
        who = acting(spec, service, args, merged, merging)
        if who.every:
            from mcp_tools.servers.google.merge import every_account

            assert merged is not None
            return await every_account(spec, merged, outputs_of(), service, who.plans, ctx, args.limit, who.several)
        if found_by_id and not getattr(args, ARGUMENT, None) and who.several:
            return await _found_by_id(spec, outputs_of(), service, who, own_arguments(spec, args), ctx, facts)
        result = await spec.handler(who.service, own_arguments(spec, args), ctx, *facts)
        return result_as(outputs_of(), result, who.label if who.several else None)

    def describe(args: Any, *facts: Any) -> str:
        line: str = spec.describe(own_arguments(spec, args), *facts)
        who = acting_of(args)
        if who is not None and who.every:
            config, env = who.service.google_config, who.service.env
            from mcp_tools.servers.google.accounts import shown

            return "; ".join(
                f"as {shown(config, env, plan.label)}: "
                + spec.describe(plan.args, *([plan.facts] if spec.facts is not None else []))
                for plan in who.plans
            )
        return named(line, who) if who is not None else line

    def render(result: Any) -> str:
        assert spec.render_text is not None
        text = spec.render_text(result)
        label = getattr(result, ARGUMENT, None)
        if label and label != ALL_ACCOUNTS:
            return f"Account: {label}\n{text}"
        return text

    extra = 0 if spec.facts is None else 1  # a tool with facts takes them last in every hook
    changes: dict[str, Any] = {
        "input_model": spec.input_model,
        "output_model": spec.output_model,
        "handler": _taking(handler, 3 + extra),
        "prepare": _taking(prepare, 3 + extra),
        "describe": _describing(describe, 1 + extra),
        "render_text": render if spec.render_text is not None else None,
        "accounts": labels_of,
    }
    if spec.dynamic_risk is not None:
        original_risk = spec.dynamic_risk

        async def dynamic_risk(service: Any, args: Any, *facts: Any) -> Risk:
            who = acting(spec, service, args, merged, merging)
            if who.every:
                from mcp_tools.servers.google.merge import risk as every_risk

                return await every_risk(spec, service, who.plans)
            risk: Risk = await original_risk(who.service, own_arguments(spec, args), *facts)
            return risk

        changes["dynamic_risk"] = _taking(dynamic_risk, 2 + extra)
    if spec.precheck is not None:
        original_check = spec.precheck

        async def precheck(service: Any, args: Any, *facts: Any) -> None:
            who = acting(spec, service, args, merged, merging)
            if who.every:
                return
            await original_check(who.service, own_arguments(spec, args), *facts)

        changes["precheck"] = _taking(precheck, 2 + extra)
    if spec.preview is not None:
        original_preview = spec.preview
        changes["preview"] = lambda args: original_preview(own_arguments(spec, args))
    fields = {field.name: getattr(spec, field.name) for field in dataclasses.fields(spec)}
    made = AccountSpec(**{**fields, **changes}, merged=merged, found_by_id=found_by_id)
    return made


def _describing(function: Any, count: int) -> Any:
    """`function(*arguments)` taking exactly `count` arguments, as the gate calls `describe`."""
    if count == 1:

        def one(args: Any) -> str:
            return str(function(args))

        return one

    def two(args: Any, facts: Any) -> str:
        return str(function(args, facts))

    return two


def _taking(function: Any, count: int) -> Any:
    """The coroutine `function(*arguments)` taking exactly `count` arguments, as the gate calls it."""
    if count == 2:

        async def two(a: Any, b: Any) -> Any:
            return await function(a, b)

        return two
    if count == 3:

        async def three(a: Any, b: Any, c: Any) -> Any:
            return await function(a, b, c)

        return three

    async def four(a: Any, b: Any, c: Any, d: Any) -> Any:
        return await function(a, b, c, d)

    return four


async def _found_by_id(
    spec: ToolSpec[Any, Any, Any],
    outputs: type[BaseModel],
    service: Any,
    who: Acting,
    args: Any,
    ctx: CallContext,
    facts: tuple[Any, ...],
) -> Any:
    """A reading tool given an id without an account: the default account first, then each other
    one while the id is not found there; the result names the account that had it."""
    from mcp_tools.servers.google.accounts import labels

    order = [who.label, *(label for label in labels(service.google_config, service.env) if label != who.label)]
    first: ToolFailure | None = None
    for label in order:
        assert label is not None
        try:
            result = await spec.handler(service.for_account(label), args, ctx, *facts)
        except ToolFailure as failure:
            if first is None and failure.kind != "not_found":
                raise  # the default account's own trouble is the answer
            first = first or failure  # another account that cannot answer is passed over
            continue
        return result_as(outputs, result, label)
    assert first is not None
    raise first


def with_accounts(
    tools: Sequence[ToolSpec[Any, Any, Any]],
    *,
    merged: Mapping[str, Merged] | None = None,
    found_by_id: Collection[str] = (),
) -> tuple[ToolSpec[Any, Any, Any], ...]:
    """Every tool of a Google namespace, with the `account` argument.

    `merged` maps each of the namespace's tools that `account: "all"` may ask of every account to how
    its answers merge; `found_by_id` names its reading tools that find an id in any account."""
    merged = dict(merged or {})
    names = {spec.name for spec in tools}
    unknown = sorted((set(merged) | set(found_by_id)) - names)
    if unknown:
        raise ValueError(f"not tools of this namespace: {', '.join(unknown)}")
    merging = tuple(sorted(merged))
    return tuple(with_account(spec, merged.get(spec.name), spec.name in found_by_id, merging) for spec in tools)


def withheld(service: Any) -> tuple[str, ...]:
    """`Namespace.withheld` of a Google namespace: `account` is listed only with several accounts."""
    from mcp_tools.servers.google.service import GoogleService

    if not isinstance(service, GoogleService):
        return (ARGUMENT,)
    from mcp_tools.servers.google.accounts import several

    service.listed_several = several(service.google_config, service.env)
    return () if service.listed_several else (ARGUMENT,)
