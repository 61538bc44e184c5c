"""What every Google namespace's service shares: the account's client and its calls.

A namespace's service subclasses `GoogleService` and sets `NAMESPACE`, `API` and `VERSION`; its methods
are blocking (googleapiclient is synchronous) and run in a worker thread. What another namespace holds
(the files store) is reached only by the handlers, through `ctx.call_tool` and the policy gate.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.google.config import DEFAULT_ACCOUNT, GoogleConfig

if TYPE_CHECKING:
    from mcp_tools.servers.google.client import GoogleClient

Key = TypeVar("Key", bound=Hashable)


class GoogleService:
    """The shared Google client (built on first use), for one namespace and one account.

    The service a namespace's `create` builds answers for the default account; `for_account`
    gives the same namespace's service for another signed-in account (built once, with its own
    client and caches), so a tool's handler never mixes two mailboxes.
    """

    NAMESPACE = ""  # gmail, drive, ...: the tools' prefix, which `access` applies to
    API = ""
    VERSION = ""
    _made_with: tuple[tuple[Any, ...], dict[str, Any]]

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        made = super().__new__(cls)
        made._made_with = (args, kwargs)  # what builds the same service for another account
        return made

    def __init__(self, google: GoogleConfig, env: Environment, scopes: list[str], access: str = "app") -> None:
        self.google_config = google
        self.env = env
        self.scopes = scopes
        self.access = access
        self.account_label: str | None = None  # None: the default account, resolved on first use
        self.account_holder = ""  # whose account (`mcp_tools.core.holders`): "" is the person's own
        self.listed_several: bool | None = None  # the tool list names accounts (set as it is built)
        self._client: GoogleClient | None = None
        self._lock = threading.Lock()
        self._twins: dict[tuple[str, str], GoogleService] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @property
    def label(self) -> str:
        """The label of the account this service acts as."""
        if self.account_label is None:
            from mcp_tools.core.holders import calling_as
            from mcp_tools.servers.google.accounts import resolve

            try:
                with calling_as("local"):  # the service `create` built acts as the person's default account
                    return resolve(self.google_config, self.env, None)
            except ToolFailure:
                return DEFAULT_ACCOUNT
        return self.account_label

    def for_account(self, label: str) -> Any:
        """This namespace's service acting as the account `label` of the caller (this one for the
        person's own default account)."""
        from mcp_tools.servers.google.principals import whose

        holder = whose(self.google_config, self.env, label)
        if label == self.label and holder == self.account_holder:
            return self
        with self._lock:
            twin = self._twins.get((holder, label))
            if twin is None:
                args, kwargs = self._made_with
                from mcp_tools.servers.google.policy import narrowed

                twin = type(self)(*narrowed(args, self.google_config, label, self.NAMESPACE), **kwargs)
                twin.account_label, twin.account_holder = label, holder
                self._twins[(holder, label)] = twin
            return twin

    @property
    def client(self) -> GoogleClient:
        with self._lock:
            if self._client is None:
                from mcp_tools.servers.google.client import shared_client

                label = self.label
                slot = None
                if self.google_config.service_account_file is None:
                    from mcp_tools.servers.google.tokens import TokenSlot

                    slot = TokenSlot(self.env, label, self.account_holder)
                shown = None if label == DEFAULT_ACCOUNT else label
                self._client = shared_client(self.google_config, slot, self.scopes, shown)
                self._client.access[self.NAMESPACE] = self.access
            return self._client

    async def run(self, tool: str, function: Any, *args: Any) -> Any:
        """`function(*args)` in a worker thread, after checking the sign-in holds the tool's scopes."""
        import anyio

        def checked() -> Any:
            self.client.check_scopes(tool)
            return function(*args)

        return await anyio.to_thread.run_sync(checked)

    def call(self, tool: str, build: Any, api: str | None = None, version: str | None = None) -> Any:
        """`build(service)` executed with retries; another API of the account by `api`/`version`."""
        return self.client.execute(api or self.API, version or self.VERSION, build, tool=tool)

    def call_object(self, tool: str, build: Any, api: str | None = None, version: str | None = None) -> dict[str, Any]:
        """`call` for a request Google answers with a JSON object (not a media download, not a delete)."""
        answer: dict[str, Any] = self.call(tool, build, api, version)
        return answer

    def batch(
        self, tool: str, requests: Sequence[tuple[Key, Callable[[Any], Any]]]
    ) -> tuple[dict[Key, Any], dict[Key, ToolFailure]]:
        return self.client.batch(self.API, self.VERSION, requests, tool=tool)
