"""What every Google namespace's service shares: the account's client and its calls.

A namespace's service subclasses `GoogleService` and sets `NAMESPACE`, `API` and `VERSION`; its methods
are blocking (googleapiclient is synchronous) and run in a worker thread. What another namespace holds
(the files store) is reached only by the handlers, through `ctx.call_tool` and the policy gate.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_tools.servers.google.config import GoogleConfig, token_path
from mcp_tools.tooling import Environment, ToolFailure

if TYPE_CHECKING:
    from mcp_tools.servers.google.client import GoogleClient

Key = TypeVar("Key", bound=Hashable)


class GoogleService:
    """The shared Google client (built on first use), for one namespace."""

    NAMESPACE = ""  # gmail, drive, ...: the tools' prefix, which `access` applies to
    API = ""
    VERSION = ""

    def __init__(self, google: GoogleConfig, env: Environment, scopes: list[str], access: str = "app") -> None:
        self.google_config = google
        self.env = env
        self.scopes = scopes
        self.access = access
        self._client: GoogleClient | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @property
    def client(self) -> GoogleClient:
        with self._lock:
            if self._client is None:
                from mcp_tools.servers.google.client import shared_client

                token_file = token_path(self.google_config, self.env)
                from mcp_tools.state import credentials_key

                key = credentials_key(self.env.state_secret)
                self._client = shared_client(self.google_config, token_file, self.scopes, key)
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
