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

A call that reaches the gate answers to the filters that say who may call (`CALLING`: policy,
reach, account); the others chose what its name resolved to. A namespace's documents (resources)
are offered where its read tool is served to a reader (`Audience.documents`). Each refusal is worded
here once: as the filter's reason (`Step.reason`) and as a refused call is told it (`Step.denial`).

This module knows the catalog only as what `Served` asks of it, the policy only as `Hiding`, and
OAuth only as a function of the spec (with a `refusal` that words it, when it has one). It imports
nothing of the package, so the gate below the inventory asks it too (tests/layers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcp_tools.core.toolsets import Selection

FILTERS = ("policy", "selection", "endpoint", "reach", "view", "account")
CALLING = ("policy", "reach", "account")  # what a call answers to at the gate


class Hiding(Protocol):
    """The policy's answer to "is this tool hidden" (`mcp_tools.policy.rules.RulePolicy`)."""

    def hidden_reason(self, tool: Any) -> str | None: ...


class Served(Protocol):
    """What the chain reads of the catalog (`mcp_tools.inventory.catalog.Catalog`)."""

    @property
    def dynamic(self) -> bool: ...

    @property
    def rules(self) -> Hiding: ...

    @property
    def selection(self) -> Selection | None: ...  # `[server] tools`; None: everything is selected


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
    # A namespace's documents (resources): its read tool is offered unless the selection excludes
    # it; leaving it out, or the dynamic view, decides what `tools/list` shows, not what a read reaches.
    documents: bool = False

    @property
    def endpoint(self) -> str | None:
        return self.namespace if self.namespace is not None else (self.view.namespace if self.view else None)


EVERYONE = Audience()


@dataclass(frozen=True)
class Step:
    """One filter's verdict on one tool; its reason is worded when asked (a call that is served
    never needs it)."""

    filter: str
    passed: bool
    why: Callable[[], str] = field(repr=False, compare=False)
    told: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    @property
    def reason(self) -> str:
        return self.why()

    @property
    def denial(self) -> str:
        """The refusal as a call it stops is told it (the gate's `denied_by_policy`)."""
        return self.told() if self.told is not None else self.why()


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


def _said(reason: str) -> Callable[[], str]:
    return lambda: reason


def _policy(catalog: Served, spec: Any, audience: Audience) -> Step:
    hidden = catalog.rules.hidden_reason(spec)
    if hidden is None:
        return Step("policy", True, _said("not hidden by the policy"))
    return Step("policy", False, _said(f"hidden: {hidden}"), _said(hidden))


def _selected(catalog: Served, spec: Any) -> bool | None:
    """True selected, False left out, None excluded by `[server] tools`."""
    selection = catalog.selection
    if selection is None:
        return True
    if spec.name in selection.excluded:
        return None
    return spec.name in selection.chosen


def _selection_reason(catalog: Served, spec: Any) -> Callable[[], str]:
    selection = catalog.selection
    return _said("served") if selection is None else lambda: selection.reason(spec.name)


def _selection(catalog: Served, spec: Any, audience: Audience) -> Step:
    chosen = _selected(catalog, spec)
    # excluded always stops; left out waits for the view in dynamic discovery, and offers documents
    passed = chosen is not None and (chosen or catalog.dynamic or audience.documents)
    return Step("selection", passed, _selection_reason(catalog, spec))


def _endpoint(catalog: Served, spec: Any, audience: Audience) -> Step:
    endpoint = audience.endpoint
    if endpoint is None or spec.namespace == endpoint:
        here = "served on this endpoint" if endpoint else "every namespace is served here"
        return Step("endpoint", True, _said(here))
    return Step(
        "endpoint",
        False,
        _said(f"this endpoint serves the {endpoint} namespace only (/{spec.namespace}/mcp has it)"),
    )


def _reach(catalog: Served, spec: Any, audience: Audience) -> Step:
    reaches = audience.reaches
    if reaches is None:
        return Step("reach", True, _said("no OAuth scopes apply"))
    if reaches(spec):
        return Step("reach", True, _said("within the scopes this sign-in was granted"))

    def why() -> str:
        refusal = getattr(reaches, "refusal", None)
        reason = refusal(spec) if refusal is not None else None
        return str(reason or "outside the scopes this sign-in was granted")

    return Step("reach", False, why, lambda: f"{spec.name} is {why()}")


def _view(catalog: Served, spec: Any, audience: Audience) -> Step:
    if not catalog.dynamic:
        return Step("view", True, _said("no dynamic discovery: every client is served the selection"))
    if _selected(catalog, spec):
        return Step("view", True, _said("in the selection every client starts with"))
    if audience.documents:
        return Step("view", True, _said("its documents are offered to every client the tool could be called by"))
    enabled: Collection[str] = audience.view.enabled if audience.view is not None else ()
    if spec.name in enabled:
        return Step("view", True, _said("enabled by this client"))
    left_out = _selection_reason(catalog, spec)
    return Step("view", False, lambda: f"{left_out()}; not enabled by this client (toolsets_enable adds it)")


def _account(catalog: Served, spec: Any, audience: Audience) -> Step:
    return Step("account", True, _said("every caller may use every account"))


CHAIN: tuple[Callable[[Served, Any, Audience], Step], ...] = (_policy, _selection, _endpoint, _reach, _view, _account)
assert tuple(f.__name__.lstrip("_") for f in CHAIN) == FILTERS


def steps(
    catalog: Served, spec: Any, audience: Audience, skip: Collection[str] = (), only: Collection[str] = FILTERS
) -> Iterator[Step]:
    for name, check in zip(FILTERS, CHAIN, strict=True):
        if name in only and name not in skip:
            yield check(catalog, spec, audience)


def explain(catalog: Served, spec: Any, audience: Audience = EVERYONE) -> Explanation:
    """Every filter's verdict on the tool for this audience."""
    return Explanation(spec.name, tuple(steps(catalog, spec, audience)))


def first_refusal(
    catalog: Served, spec: Any, audience: Audience, skip: Collection[str] = (), only: Collection[str] = FILTERS
) -> Step | None:
    """The first filter that keeps the tool from this audience (the rest are not asked)."""
    return next((step for step in steps(catalog, spec, audience, skip, only) if not step.passed), None)


@dataclass(frozen=True)
class Ruled:
    """The catalog as the gate reads it: a call answers only to the filters of `CALLING`, and of
    the catalog those read only the policy's hiding (the same `RulePolicy` the catalog holds)."""

    rules: Hiding
    dynamic: bool = False
    selection: Selection | None = None


def call_refusal(rules: Hiding, spec: Any, reaches: Callable[[Any], bool] | None = None) -> Step | None:
    """Why a call of the tool stops at the gate (hidden by the policy, outside the caller's
    scopes), or None when it may go on; `Step.denial` words it for the caller."""
    return first_refusal(Ruled(rules), spec, Audience(reaches=reaches), only=CALLING)
