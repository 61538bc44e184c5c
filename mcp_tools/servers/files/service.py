"""The files service: a backend (local folder or S3 bucket) plus the limits and name rule from `[files]`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio.from_thread
import anyio.to_thread

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files.backend import Backend
from mcp_tools.servers.files.config import FilesConfig
from mcp_tools.util.sandbox import KeyPolicy, check_key

ResultT = TypeVar("ResultT")


class FilesService:
    """A store plus the limits from config; runs blocking backends in a worker thread."""

    def __init__(self, store: Backend, config: FilesConfig) -> None:
        self.store = store
        self.config = config
        self.max_read_bytes = config.max_read_bytes
        self.max_write_bytes = config.max_write_bytes
        self.names: KeyPolicy = config.names
        self.resolver: Any = None  # name resolution for files.import; None is the system's

    def check_path(self, value: str, field: str = "path", *, allow_empty: bool = False) -> str:
        """A path under the store's name rule; a name only the strict rule refuses says how to allow it."""
        try:
            check_key(value, self.names, field=field, allow_empty=allow_empty)
        except ToolFailure as failure:
            if self.names == "strict" and _fits_unicode(value):
                raise ToolFailure(failure.kind, failure.message, UNICODE_NAMES_HINT) from None
            raise
        return value

    def import_policy(self) -> Any:
        from mcp_tools.util.outbound import OutboundPolicy, parse_networks

        return OutboundPolicy(
            tuple(self.config.import_hosts), parse_networks(self.config.import_networks), self.config.import_plain_http
        )

    async def version_now(self, key: str, expected: str | None, read_sha256: str | None = None) -> str | None:
        """The file's version in the form of `expected` (`Backend.current_version`): `read_sha256`, of
        what the caller just read, when nothing is expected or it already matches."""
        if expected is None or (read_sha256 is not None and expected.lower() == read_sha256):
            return read_sha256
        return await self.run(self.store.current_version, key, expected)

    async def run(self, function: Callable[..., ResultT], *args: Any, **kwargs: Any) -> ResultT:
        if not self.store.blocking:
            return function(*args, **kwargs)
        return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))


UNICODE_NAMES_HINT = (
    "names with spaces, accents or other scripts are refused by default; "
    'the person can allow them with names = "unicode" in the [files] section of the config'
)


def _fits_unicode(key: str) -> bool:
    try:
        check_key(key, "unicode", allow_empty=True)
    except ToolFailure:
        return False
    return True
