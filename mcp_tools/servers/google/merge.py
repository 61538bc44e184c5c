"""`account: "all"` on the reading tools that list: every account asked, the hits merged, one cursor.

Each account is asked for a page as the tool would ask it; the hits are merged head by head in
the tool's own order (newest first for mail, files and tasks; soonest first for events), so
each account's hits come in their own order and none is skipped or repeated across pages. The
cursor holds, sealed, for each account still holding hits its own cursor and how many hits of
that page were already given (`mcp_tools.servers.google.cursor`): no server keeps it. An account that cannot answer
(signed out, refused) is left out and named in the result's `account`; the others answer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from mcp_tools.core.tooling import CallContext, Risk, ToolFailure, ToolSpec


def moment(text: str | None) -> float:
    """An ISO 8601 date or time as seconds (0 when absent or unreadable): the order of most hits."""
    if not text:
        return 0.0
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp()


@dataclass(frozen=True)
class Merged:
    """How one tool's answers merge: its list of hits, its cursor and limit, and the order.

    A namespace declares it for each of its listing tools (`with_accounts(TOOLS, merged=...)`)."""

    hits: str  # the result's list field
    item: type[BaseModel]  # the model of one hit
    cursor: str  # the argument that pages
    next_cursor: str  # the result field with the next page's cursor
    key: Callable[[Any], float]  # larger first
    first_page: Any = None  # what the cursor argument is on the first page
    defaults: dict[str, Any] = field(default_factory=dict)  # arguments every account's call needs here


def result_as(model: type[BaseModel], result: Any, label: str | None) -> Any:
    """`result` in the listed output model, saying `label` (None: saying nothing)."""
    values = {name: getattr(result, name) for name in type(result).model_fields}
    made = model.model_construct(_fields_set=set(result.model_fields_set) | {"account"}, **values, account=label)
    private = getattr(result, "__pydantic_private__", None)
    if private:
        made.__pydantic_private__ = {**(made.__pydantic_private__ or {}), **private}
    return made


@dataclass
class Plan:
    """One account's part of a merged page: its arguments, its facts and where it stands."""

    label: str
    args: Any
    facts: Any
    skip: int
    cursor: Any


def plans(spec: ToolSpec[Any, Any, Any], merged: Merged, service: Any, args: Any) -> list[Plan]:
    """For each account still to ask: the tool's arguments for its page."""
    from mcp_tools.servers.google.accounts import labels
    from mcp_tools.servers.google.cursor import open_cursor

    given = getattr(args, merged.cursor)
    if given:
        state = open_cursor(service.env, spec.name, str(given))
    else:
        state = {label: (merged.first_page, 0) for label in labels(service.google_config, service.env)}
    found = []
    for label, (cursor, skip) in state.items():
        update = {merged.cursor: cursor}
        for name, value in merged.defaults.items():
            if not getattr(args, name):
                update[name] = value
        own = args.model_copy(update=update)
        found.append(Plan(label, own, spec.new_facts(), skip, cursor))
    return found


async def risk(spec: ToolSpec[Any, Any, Any], service: Any, planned: list[Plan]) -> Risk:
    """The tool's own risk check for each account's page; the strictest wins."""
    assert spec.dynamic_risk is not None
    found = Risk.LOW
    for plan in planned:
        extra = [plan.facts] if spec.facts is not None else []
        try:
            level = await spec.dynamic_risk(service.for_account(plan.label), plan.args, *extra)
        except ToolFailure:
            continue  # the handler reports the account as not answering
        found = max(found, level)
    return found


async def every_account(
    spec: ToolSpec[Any, Any, Any],
    merged: Merged,
    outputs: type[BaseModel],
    service: Any,
    planned: list[Plan],
    ctx: CallContext,
    limit: int,
    labelled: bool = True,
) -> Any:
    """Every account's page, merged; the result in the listed output model (the hits saying their
    account when `labelled`: the list names accounts)."""
    from mcp_tools.servers.google.config import ALL_ACCOUNTS
    from mcp_tools.servers.google.cursor import seal

    answers: dict[str, tuple[Plan, Any, list[Any]]] = {}
    failed: list[str] = []
    for plan in planned:
        extra = [plan.facts] if spec.facts is not None else []
        try:
            result = await spec.handler(service.for_account(plan.label), plan.args, ctx, *extra)
        except ToolFailure as failure:
            failed.append(f"{plan.label} ({failure.kind}: {failure.message}; {failure.hint or ''})".replace("; )", ")"))
            continue
        answers[plan.label] = (plan, result, list(getattr(result, merged.hits))[plan.skip :])
    if not answers:
        raise ToolFailure("not_configured", "no Google account answered: " + "; ".join(failed))
    taken: dict[str, int] = dict.fromkeys(answers, 0)
    hits: list[Any] = []
    item_model = outputs.model_fields[merged.hits].annotation.__args__[0]  # type: ignore[union-attr]
    while len(hits) < limit:
        heads = [(label, items[taken[label]]) for label, (_, _, items) in answers.items() if taken[label] < len(items)]
        waiting = any(
            taken[label] >= len(items) and getattr(result, merged.next_cursor)
            for label, (_, result, items) in answers.items()
        )
        if not heads or waiting:
            break  # an account whose page ran out holds more: its next hits may come first
        label, best = max(heads, key=lambda head: merged.key(head[1]))
        taken[label] += 1
        values = {name: getattr(best, name) for name in type(best).model_fields}
        values["account"] = label if labelled else None
        hits.append(item_model.model_construct(_fields_set=set(best.model_fields_set) | {"account"}, **values))
    state: dict[str, tuple[Any, int]] = {}
    for label, (plan, result, items) in answers.items():
        following = getattr(result, merged.next_cursor)
        if taken[label] < len(items):
            state[label] = (plan.cursor, plan.skip + taken[label])
        elif following:
            state[label] = (following, 0)
    first = next(iter(answers.values()))[1]
    label = ALL_ACCOUNTS if not failed else f"{ALL_ACCOUNTS}; not answering: {', '.join(failed)}"
    made = result_as(outputs, first, label if labelled else None)
    setattr(made, merged.hits, hits)
    setattr(made, merged.next_cursor, seal(service.env, spec.name, state) if state else None)
    if hasattr(made, "failed"):
        made.failed = [item for _, result, _ in answers.values() for item in getattr(result, "failed", [])]
    return made
