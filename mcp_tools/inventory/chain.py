"""Who is served a tool: one ordered chain of filters, each of which says why.

Every face asks the same question of the same chain: MCP `tools/list` (a tool is listed when
every filter lets it through), `tools/call` and calls written as text (a call finds a tool only
when the chain serves it, else the refusal names the filter and its reason), `mcp-tools tools`
(`--explain` prints every step) and `mcp-tools doctor`. The filters, in order:

    policy     hidden by `[policy]`: `disabled`, `read_only`, a `deny` rule
    selection  `[server] tools`: an exclusion always hides; a tool left out waits for the view
    endpoint   a namespace's own endpoint (`/files/mcp`) serves only that namespace
    reach      the scopes an OAuth sign-in was granted (`[http.oauth] scopes`)
    view       dynamic discovery: what this client enabled besides the selection
    account    which account a caller may use (every caller may use every account today)

This module knows the catalog only as what `Served` asks of it, and OAuth only as a function of
the spec (with a `refusal` that words it, when it has one).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

FILTERS = ("policy", "selection", "endpoint", "reach", "view", "account")


class Served(Protocol):
    """What the chain needs of the catalog (`mcp_tools.inventory.catalog.Catalog`)."""

    dynamic: bool

    def hidden_reason(self, spec: Any) -> str | None: ...

    def selection_reason(self, spec: Any) -> tuple[bool | None, str]: ...


class Enabled(Protocol):
    """A client's dynamic-discovery view (`mcp_tools.inventory.discovery.ClientToolsets`)."""

    enabled: set[str]
    namespace: str | None


@dataclass(frozen=True)
class Audience:
    """Who asks, as far as serving goes: the endpoint, the OAuth reach, the dynamic view."""

    namespace: str | None = None  # a namespace's own endpoint; None: the whole server
    reaches: Callable[[Any], bool] | None = None  # None: no OAuth scopes apply (stdio, a static token)
    view: Enabled | None = None  # dynamic discovery: this client's view; None: a client that enabled nothing

    @property
    def endpoint(self) -> str | None:
        return self.namespace if self.namespace is not None else (self.view.namespace if self.view else None)


EVERYONE = Audience()


@dataclass(frozen=True)
class Step:
    """One filter's verdict on one tool."""

    filter: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class Explanation:
    """Every filter's verdict on one tool for one audience, in chain order."""

    tool: str
    steps: tuple[Step, ...]

    @property
    def served(self) -> bool:
        return all(step.passed for step in self.steps)

    @property
    def refusal(self) -> Step | None:
        """The first filter that keeps the tool from this audience."""
        return next((step for step in self.steps if not step.passed), None)

    @property
    def reason(self) -> str:
        """In words for `mcp-tools tools` and `doctor`: the first refusal, else what serves it."""
        refusal = self.refusal
        if refusal is not None:
            return refusal.reason
        return next(step.reason for step in self.steps if step.filter == "selection")

    def as_dict(self) -> dict[str, Any]:
        return {
            "served": self.served,
            "why": self.reason,
            "steps": [{"filter": step.filter, "passed": step.passed, "reason": step.reason} for step in self.steps],
        }


def _policy(catalog: Served, spec: Any, audience: Audience) -> Step:
    hidden = catalog.hidden_reason(spec)
    return Step("policy", hidden is None, f"hidden: {hidden}" if hidden else "not hidden by the policy")


def _selection(catalog: Served, spec: Any, audience: Audience) -> Step:
    chosen, reason = catalog.selection_reason(spec)
    if chosen is None:  # excluded
        return Step("selection", False, reason)
    # left out: in dynamic discovery the view may still serve it, so the view decides
    return Step("selection", chosen or catalog.dynamic, reason)


def _endpoint(catalog: Served, spec: Any, audience: Audience) -> Step:
    endpoint = audience.endpoint
    if endpoint is None or spec.namespace == endpoint:
        return Step("endpoint", True, "served on this endpoint" if endpoint else "every namespace is served here")
    return Step("endpoint", False, f"this endpoint serves the {endpoint} namespace only (/{spec.namespace}/mcp has it)")


def _reach(catalog: Served, spec: Any, audience: Audience) -> Step:
    reaches = audience.reaches
    if reaches is None:
        return Step("reach", True, "no OAuth scopes apply")
    if reaches(spec):
        return Step("reach", True, "within the scopes this sign-in was granted")
    refusal = getattr(reaches, "refusal", None)
    reason = refusal(spec) if refusal is not None else None
    return Step("reach", False, reason or "outside the scopes this sign-in was granted")


def _view(catalog: Served, spec: Any, audience: Audience) -> Step:
    if not catalog.dynamic:
        return Step("view", True, "no dynamic discovery: every client is served the selection")
    chosen, reason = catalog.selection_reason(spec)
    if chosen:
        return Step("view", True, "in the selection every client starts with")
    enabled: Collection[str] = audience.view.enabled if audience.view is not None else ()
    if spec.name in enabled:
        return Step("view", True, "enabled by this client")
    return Step("view", False, f"{reason}; not enabled by this client (toolsets_enable adds it)")


def _account(catalog: Served, spec: Any, audience: Audience) -> Step:
    return Step("account", True, "every caller may use every account")


CHAIN: tuple[Callable[[Served, Any, Audience], Step], ...] = (_policy, _selection, _endpoint, _reach, _view, _account)
assert tuple(f.__name__.lstrip("_") for f in CHAIN) == FILTERS


def steps(catalog: Served, spec: Any, audience: Audience, skip: Collection[str] = ()) -> Iterator[Step]:
    for name, check in zip(FILTERS, CHAIN, strict=True):
        if name not in skip:
            yield check(catalog, spec, audience)


def explain(catalog: Served, spec: Any, audience: Audience = EVERYONE) -> Explanation:
    """Every filter's verdict on the tool for this audience."""
    return Explanation(spec.name, tuple(steps(catalog, spec, audience)))


def first_refusal(catalog: Served, spec: Any, audience: Audience, skip: Collection[str] = ()) -> Step | None:
    """The first filter that keeps the tool from this audience (the rest are not asked)."""
    return next((step for step in steps(catalog, spec, audience, skip) if not step.passed), None)
