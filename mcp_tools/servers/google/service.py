"""What every Google namespace's service shares: the account's client, calls, the files store.

A namespace's service subclasses `GoogleService` and sets `NAMESPACE`, `API` and `VERSION`; its methods
are blocking (googleapiclient is synchronous) and run in a worker thread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from mcp_tools.servers.google.config import GoogleConfig, token_path
from mcp_tools.tooling import Environment, ToolFailure


@dataclass
class FilesAccess:
    """The files store, when the files namespace is on: attachments and downloads come from and go to it."""

    service: Any

    def read(self, path: str, limit: int, field: str = "path") -> bytes:
        self.check(path, field)
        entry = self.service.store.stat(path)
        if entry is None or entry.type != "file":
            raise ToolFailure("not_found", f"no file {path!r} in the files store", "paths come from files_list")
        if entry.size is not None and entry.size > limit:
            raise ToolFailure("too_large", f"{path} is {entry.size} bytes; at most {limit} bytes fit here")
        return bytes(self.service.store.read_all(path, limit))

    def check(self, path: str, field: str = "path") -> None:
        """A path the files store takes, under its name rule (`[files] names`)."""
        self.service.check_path(path, field)

    def name_for(self, filename: str, fallback: str = "attachment") -> str:
        """An outside file name as one segment the files store takes, as close to it as its rule allows."""
        from mcp_tools.sandbox import safe_name

        return safe_name(filename, self.service.names, fallback=fallback)

    def save(self, path: str, data: bytes) -> None:
        self.service.store.write(path, data, create_parents=True, expected_sha256=None)


class GoogleService:
    """The shared Google client (built on first use) and the files store, for one namespace."""

    NAMESPACE = ""  # gmail, drive, ...: the tools' prefix, which `access` applies to
    API = ""
    VERSION = ""

    def __init__(self, google: GoogleConfig, env: Environment, scopes: list[str], access: str = "app") -> None:
        self.google_config = google
        self.env = env
        self.scopes = scopes
        self.access = access
        self._client: Any = None
        self._lock = threading.Lock()
        self._files: FilesAccess | bool | None = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                from mcp_tools.servers.google.client import shared_client

                token_file = token_path(self.google_config, self.env)
                self._client = shared_client(self.google_config, token_file, self.scopes)
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

    def batch(self, tool: str, requests: Any) -> tuple[dict[Any, Any], dict[Any, Any]]:
        return self.client.batch(self.API, self.VERSION, requests, tool=tool)

    def files(self) -> FilesAccess | None:
        """The files store if that namespace is on, built from its own section."""
        if self._files is False:
            servers = self.env.servers
            if servers is not None and "files" not in servers:
                self._files = None
            else:
                from mcp_tools.config import validate_section
                from mcp_tools.servers import load_namespace

                namespace = load_namespace("files")
                section = validate_section("files", namespace.config_model, self.env.sections.get("files", {}))
                try:
                    self._files = FilesAccess(namespace.create(section, self.env))
                except Exception:
                    self._files = None
        return self._files or None
