"""The contract between the core and every namespace server.

A namespace declares its tools as data (`ToolSpec`) and builds a service object from its
own config section; it never sees transports, policy, audit or approvals. Handlers raise
`ToolFailure` for anything the model should read and act on.
"""

from __future__ import annotations

import argparse
import enum
import importlib.util
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler, PrivateAttr, model_validator
from pydantic.json_schema import JsonSchemaValue
from typing_extensions import TypeVar as DefaultedTypeVar

ErrorKind = Literal[
    "invalid_arguments",
    "not_found",
    "conflict",
    "too_large",
    "denied_by_policy",
    "approval_required",
    "declined_by_user",
    "not_configured",
    "upstream_error",
    "timeout",
    "unknown_tool",
    "unavailable",
    "internal_error",
]


class Risk(enum.IntEnum):
    """Ordered so that `max()` picks the stricter level."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3
    DENY = 4

    @classmethod
    def parse(cls, value: str | Risk) -> Risk:
        if isinstance(value, Risk):
            return value
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown risk {value!r}; expected one of low, medium, high, deny") from None

    @property
    def label(self) -> str:
        return self.name.lower()


class ToolFailure(Exception):
    """A failure the model can act on; becomes an `isError` result, never a traceback."""

    def __init__(
        self, kind: ErrorKind, message: str, hint: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.hint = hint
        self.details = details or {}

    def as_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.hint:
            error["hint"] = self.hint
        error.update(self.details)
        return error


class NotConfigured(Exception):
    """Raised by a namespace's `create` when it cannot run; the message says what to set."""


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """The modules that cannot be imported, found without importing any of them."""
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def install_hint(extra: str, missing: list[str] | str) -> str:
    from mcp_tools.util.commands import pip_install

    names = missing if isinstance(missing, str) else ", ".join(missing)
    return f"a library it needs is not installed ({names}); run: {pip_install(extra)}"


class Arguments(BaseModel):
    """Base for tool input models: unknown arguments are errors, so typos are not ignored.

    No string argument may hold a NUL character (SQLite, FTS queries, file names and most
    upstreams cut or reject it) unless its field is named in `nul_allowed` (file contents).
    Validators are built on first use (`defer_build`): a server that lists 40 tools should not
    pay for all of them before it answers.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)
    nul_allowed: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _refuse_nul(self) -> Any:
        for name in type(self).model_fields:
            if name not in self.nul_allowed and _holds_nul(getattr(self, name)):
                raise ValueError(f"{name} must not contain a NUL character (\\u0000)")
        return self


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    return False


# What one page of text may hold so that a result fits the default result budget (20,000 tokens,
# text and structured content together): the page is in both, and JSON escapes add some.
MAX_PAGE_CHARS = 30_000
# An image up to this size comes back as MCP image content the model can see; larger ones are
# saved into the files store or read as base64 pages.
MAX_INLINE_IMAGE_BYTES = 48 * 1024
INLINE_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class Output(BaseModel):
    """Base for tool output models; built on first use, like `Arguments`.

    `with_image` attaches an image the client shows the model as MCP image content, beside the
    structured content (which carries only what describes it).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)
    _images: list[tuple[str, str]] = PrivateAttr(default_factory=list)

    def with_image(self, data: bytes, mime_type: str) -> Any:
        import base64

        self._images.append((base64.b64encode(data).decode("ascii"), mime_type))
        return self

    @property
    def images(self) -> list[tuple[str, str]]:
        """(base64 data, MIME type) of each attached image."""
        return list(self._images)


ABSENT_WHEN_NONE = "x-absent-when-none"  # marks an output model's schema; mcp_server drops the null option


class AbsentWhenNone(Output):
    """An output model whose fields left at None are absent from the result instead of null (the
    gate dumps it with `exclude_none`, its nested models too).

    Its schema then needs no null option: `{"type": "integer"}` outside `required` says it, where
    `null` would take `type: ["integer", "null"]` (which clients that map schemas onto one type,
    such as Gemini's function declarations, reject) or a longer `anyOf`.
    """

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        handler.resolve_ref_schema(schema)[ABSENT_WHEN_NONE] = True
        return schema


class CallContext:
    """What a handler may use of the call in progress besides its arguments.

    `call_tool` is the one way a handler reaches another namespace (saving a download into the
    files store, attaching a stored file): the core runs that call through the policy gate as
    the same caller, so its rules, `read_only`, precheck, confirmation and audit row apply as if
    the caller had made it. A tool may call only the tools its `ToolSpec.reaches` names.
    """

    def __init__(
        self,
        *,
        principal: str = "local",
        transport: str = "local",
        progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
        call_tool: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        via: str | None = None,
    ) -> None:
        self.principal = principal
        # the tool whose handler made this call (`call_tool`): its result goes to that handler, not
        # into a model's context, so it need not page inside the result budget
        self.via = via
        self.transport = transport
        self._progress = progress
        self._call_tool = call_tool

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self._progress is not None:
            await self._progress(progress, total, message)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Another tool's structured result, by canonical name, through the gate; raises `ToolFailure`."""
        if self._call_tool is None:
            raise ToolFailure("not_configured", f"{name} cannot be called from here")
        return await self._call_tool(name, arguments)


def json_type(value: Any) -> str:
    """How an error names a JSON value's type."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object", type(None): "null"}.get(type(value), "a value")


def _unchanged(arguments: dict[str, Any]) -> dict[str, Any]:
    return dict(arguments)


@dataclass(frozen=True)
class ToolAlias:
    """A name another system's models write for a tool, declared next to the tool it stands for.

    `renames` maps that system's argument names onto the tool's own; `reshape` then turns what
    is left into the tool's shapes (Google's `{"dateTime": ...}` into a string) and raises
    `ToolFailure(invalid_arguments)` naming the field in the alias's own terms. Keys neither
    knows pass on, so the tool's validation reports them.
    """

    name: str
    renames: Mapping[str, str] = field(default_factory=dict, hash=False)
    reshape: Callable[[dict[str, Any]], dict[str, Any]] = _unchanged

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments in the tool's own terms."""
        renamed: dict[str, Any] = {}
        for key, value in arguments.items():
            ours = self.renames.get(key, key)
            if ours in renamed:
                raise ToolFailure(
                    "invalid_arguments",
                    f"{ours} is given twice (as {key} and under another name); send it once",
                )
            renamed[ours] = value
        return self.reshape(renamed)


def alias_error(message: str) -> ToolFailure:
    """An alias's arguments that cannot be put in the tool's terms."""
    return ToolFailure("invalid_arguments", message, 'e.g. {"path": "a.txt", "search_replace": {"old_string": ...}}')


InputT = TypeVar("InputT", bound=BaseModel)
OutputT = TypeVar("OutputT", bound=BaseModel)
ServiceT = TypeVar("ServiceT")
# A tool's per-call facts (`ToolSpec.facts`); `Any` where a list holds tools with different facts.
FactsT = DefaultedTypeVar("FactsT", default=Any)


TaskSupport = Literal["forbidden", "optional", "required"]


@dataclass(frozen=True)
class UpstreamScopes:
    """The OAuth scopes an upstream account must grant for one tool.

    `asked` are what the tool asks for at the default access level; `wider` what it asks
    instead at a wider level the person chose (`[drive] access = "read"`); `methods` the API
    methods it calls (their discovery ids), whose own accepted scopes decide whether a broader
    grant suffices.
    """

    asked: tuple[str, ...]
    methods: tuple[str, ...] = ()
    wider: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def at(self, access: str) -> tuple[str, ...]:
        """The scopes asked at an access level."""
        return self.wider.get(access) or self.asked


@dataclass(frozen=True)
class ToolSpec(Generic[ServiceT, InputT, OutputT, FactsT]):
    """One tool, declared as data.

    `risk` is the base level; `dynamic_risk` may raise it from the arguments and the
    service's state (an overwrite, a recipient outside the domain). `describe` is the one
    line a person reads before confirming a high-risk call.

    `precheck` runs after validation and before the person is asked: cheap checks that the
    call can run at all (the target exists, an expected hash still matches), raising
    `ToolFailure`, so nobody approves a call that was bound to fail. `tier` says whether a
    model needs the tool most (`core`) or only sometimes (`extended`); toolsets select by it.

    `reaches` maps an argument to the other namespace's tool it acts through
    (`{"save_to": "files.write"}`): the handler does that part with `ctx.call_tool`, and when the
    policy hides that tool (or its namespace is off) the argument is left out of the listed
    schema and a call that sets it is refused before anything runs. `prepare(service, args, ctx)`
    gathers what the call needs through those tools (the stored files a mail attaches) before
    the risk is computed, the precheck runs and the person is asked.

    `facts` is the class of what one call learns on its way (the file as it is before a delete,
    the stored files a mail attaches), so that `describe` tells the person about the real target
    and the handler does not look it up twice. Arguments stay what the caller sent. The gate
    makes one instance per call (`facts()`, so a small dataclass with defaults) and passes it
    as the last argument to `prepare(service, args, ctx, facts)`, `dynamic_risk(service, args,
    facts)`, `precheck(service, args, facts)`, `describe(args, facts)` and `handler(service,
    args, ctx, facts)`; a tool without `facts` takes none of them. Nothing else sees that
    object, so two calls of one tool at once never share what they found. A `target_version`
    field on it (what changes when the target does) is part of what an approval covers.
    """

    name: str
    description: str
    input_model: type[InputT]
    output_model: type[OutputT]
    handler: (
        Callable[[ServiceT, InputT, CallContext], Awaitable[OutputT]]
        | Callable[[ServiceT, InputT, CallContext, FactsT], Awaitable[OutputT]]
    )
    risk: Risk
    describe: Callable[[InputT], str] | Callable[[InputT, FactsT], str]
    title: str | None = None
    read_only: bool = False
    open_world: bool = False
    idempotent: bool = False
    dynamic_risk: (
        Callable[[ServiceT, InputT], Awaitable[Risk]] | Callable[[ServiceT, InputT, FactsT], Awaitable[Risk]] | None
    ) = None
    precheck: (
        Callable[[ServiceT, InputT], Awaitable[None]] | Callable[[ServiceT, InputT, FactsT], Awaitable[None]] | None
    ) = None
    tier: Literal["core", "extended"] = "core"
    destructive: bool | None = None  # overrides the derived destructiveHint (e.g. an edit in place)
    render_text: Callable[[OutputT], str] | None = None
    reaches: Mapping[str, str] = field(default_factory=dict, hash=False)
    prepare: (
        Callable[[ServiceT, InputT, CallContext], Awaitable[None]]
        | Callable[[ServiceT, InputT, CallContext, FactsT], Awaitable[None]]
        | None
    ) = None
    # True for a call that only shows what it would do (a dry run): it changes nothing, so it
    # runs as low risk, without asking, whatever risk the tool carries otherwise.
    preview: Callable[[InputT], bool] | None = None
    # Names other systems' models write for this tool (`gmail_list`, `write_file`), with their
    # argument names: text calls resolve them through the catalog (`mcp_tools.inventory.catalog`).
    aliases: tuple[ToolAlias, ...] = ()
    facts: type[FactsT] | None = None
    # What an account upstream must grant for the tool to run (a Google tool's OAuth scopes and
    # the API methods it calls); None for a tool that signs in nowhere.
    scopes: UpstreamScopes | None = None
    # Whether a call may run as an MCP task although it never waits for the person: "optional" for
    # a tool whose calls may take long (a large transfer), listed as `execution.taskSupport`. A
    # tool that may wait for the person (high risk, or raised by its arguments) is listed so anyway.
    task_support: TaskSupport = "forbidden"
    # Which calls of such a tool take long (`{"save_to": ...}` set): those a 2026-07-28 client that
    # declared tasks gets as a task unasked; None means every call. A 2025-11-25 client asks itself.
    long_call: Callable[[Mapping[str, Any]], bool] | None = None
    # The upstream accounts a call acts as (their labels, never a credential), from its validated
    # arguments once its hooks have resolved them: policy rules may name them and its audit row
    # records them. None for a tool without accounts.
    accounts: Callable[[Any], Sequence[str]] | None = field(default=None, compare=False)

    def new_facts(self) -> FactsT | None:
        """A fresh facts object for one call (None for a tool without facts)."""
        return None if self.facts is None else self.facts()

    @property
    def namespace(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def method(self) -> str:
        return self.name.split(".", 1)[1]


@dataclass(frozen=True)
class SearchHit:
    """One document a namespace found for a cross-namespace search.

    `ref` is what the namespace's own `read_tool` takes (a path or an id); `score` only orders
    hits within one namespace, so the merge compares ranks, not raw scores.
    """

    title: str
    snippet: str
    ref: str
    score: float = 0.0


@dataclass(frozen=True)
class SearchHook(Generic[ServiceT]):
    """How a namespace that holds documents answers `search.all`: `find(service, query, limit)`.

    `read_tool` names the tool that opens a hit (`notes.read`); when the policy hides that tool,
    the namespace is left out of cross-namespace search as well. `find` must stop when cancelled
    (blocking work: `anyio.to_thread.run_sync(..., abandon_on_cancel=True)`), so a slow source
    cannot hold the answer back.
    """

    find: Callable[[ServiceT, str, int], Awaitable[list[SearchHit]]]
    read_tool: str
    ref_argument: str = "path"


@dataclass(frozen=True)
class ResourceItem:
    """One stored document offered as an MCP resource: its path under a root (a notes vault's
    label; `""` is the default), and what a listing says of it."""

    path: str
    size: int | None = None
    mime_type: str | None = None


@dataclass(frozen=True)
class ResourceBody:
    """What a read tool's structured result holds, as resource contents: text or base64 bytes."""

    mime_type: str
    text: str | None = None
    blob: str | None = None
    truncated: bool = False


@dataclass(frozen=True)
class ResourceHook(Generic[ServiceT]):
    """How a namespace that stores documents offers them as MCP resources, `<namespace>://<root>/<path>`.

    Listing and watching use the service (`items(service, root, after, limit)`: paths in order after
    `after`, and whether more follow; `version(service, root, path)`: what changes when the
    document does, None when it is gone). Reading is a call of `read_tool` through the policy gate,
    with `{"path": path}` (and `root_argument: root` for another root), so a read meets the same
    rules, containment and audit as the tool; `body` turns its structured result into contents.
    """

    roots: Callable[[ServiceT], Sequence[str]]
    items: Callable[[ServiceT, str, str | None, int], Awaitable[tuple[list[ResourceItem], bool]]]
    version: Callable[[ServiceT, str, str], Awaitable[str | None]]
    read_tool: str
    body: Callable[[dict[str, Any], list[tuple[str, str]]], ResourceBody]
    read_arguments: Mapping[str, Any] = field(default_factory=dict)
    root_argument: str | None = None
    title: str = ""


@dataclass(frozen=True)
class SearchSource:
    """A namespace's search hook bound to its running service; what the core hands `search.all`."""

    namespace: str
    find: Callable[[str, int], Awaitable[list[SearchHit]]]
    read_tool: str
    ref_argument: str


@dataclass(frozen=True)
class Environment:
    """Where a namespace may keep things; given to `Namespace.create`."""

    data_dir: Path
    state_dir: Path
    env: Mapping[str, str] = field(default_factory=dict)
    # The enabled namespaces' search hooks, bound to their services and filled in by the core
    # as namespaces start; only the search namespace reads it.
    search_sources: dict[str, SearchSource] = field(default_factory=dict)
    # Channels that can tell the person something (`"telegram"`), by name; a namespace that
    # announces (new mail) picks one by the name its config gives and knows nothing else of it.
    announcers: Mapping[str, Callable[[str], Awaitable[None]]] = field(default_factory=dict)
    # Raw config sections a namespace may read (the shared `[google]`, never another namespace's) and the namespaces
    # the person selected (None: every configured one).
    sections: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    servers: Sequence[str] | None = None
    # `[state] secret` shared by the replicas (None on one machine): stored credentials are
    # encrypted under keys derived from it.
    state_secret: str | None = None
    # The loaded config file and every path its values name (key files, tokens, folders): what a
    # sandbox must keep out of reach.
    config_file: Path | None = None
    config_paths: Sequence[Path] = ()
    # The server's state store (`mcp_tools.state.store.StateStore`), where the Google accounts'
    # tokens live; None: the SQLite file in `state_dir`.
    state_store: Any = None
    # principal -> whose Google accounts its calls use (`mcp_tools.core.holders`); None: the person's own.
    holder_of: Callable[[str], str] | None = None
    # The server's own address Google sends a principal's sign-in back to (None: no principals).
    google_callback: str | None = None

    def namespace_state_dir(self, namespace: str) -> Path:
        path = self.state_dir / namespace
        path.mkdir(parents=True, exist_ok=True)
        return path


@dataclass(frozen=True)
class HttpRoute:
    """An extra HTTP endpoint a namespace serves beside MCP (behind the same bearer auth)."""

    path: str
    methods: tuple[str, ...]
    endpoint: Callable[[Any], Awaitable[Any]]


@dataclass(frozen=True)
class CliCommand(Generic[ServiceT]):
    """A namespace's own CLI command, served as `mcp-tools NAMESPACE NAME`."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[ServiceT, argparse.Namespace], Awaitable[int]]


@dataclass(frozen=True)
class Namespace(Generic[ServiceT]):
    """A namespace server: its tools, its config model, and how to build its service.

    `create` must be cheap (start-up time matters); slow work belongs in `lifespan`, which
    runs for as long as the server serves. `create` raises `NotConfigured` with what to set
    when the namespace cannot run.

    `requires` names the top-level modules the namespace cannot work without; they are looked
    up (never imported) before `create`, and when one is missing the namespace stays off with
    the `pip install` command that brings it (`mcp_tools.util.commands.pip_install`) (`extra` defaults to the name).
    """

    name: str
    description: str
    config_model: type[BaseModel]
    create: Callable[[Any, Environment], ServiceT]
    tools: Sequence[ToolSpec[ServiceT, Any, Any]]
    needs_account: bool = False
    lifespan: Callable[[ServiceT], AbstractAsyncContextManager[None]] | None = None
    # argument (and result field) names its tools leave out of their listed schemas, as configured
    # (asked with None where tools are measured unbuilt: then as the default configuration does)
    withheld: Callable[[ServiceT | None], tuple[str, ...]] | None = None
    http_routes: Callable[[ServiceT], Sequence[HttpRoute]] | None = None
    commands: Sequence[CliCommand[ServiceT]] = ()
    instructions: str | None = None
    search: SearchHook[ServiceT] | None = None
    resources: ResourceHook[ServiceT] | None = None
    # how an enabled namespace runs, in one or more lines for `mcp-tools doctor` (the terminal's
    # isolation, the notes embedding model); asked only by doctor, so it may do a little I/O
    status: Callable[[ServiceT], str | Sequence[str]] | None = None
    requires: tuple[str, ...] = ()
    extra: str | None = None
