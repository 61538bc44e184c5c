"""Logging to stderr: our level for `mcp_tools`, INFO or quieter for everyone else, secrets scrubbed.

`[server] log_level` or `MCP_TOOLS_LOG_LEVEL` sets the level of the `mcp_tools` loggers only.
Other libraries stay at INFO or above unless `MCP_TOOLS_LIBRARY_LOG_LEVEL` lowers them, and the
libraries known to log request and response bodies (file contents, mail, tokens) at DEBUG never
go below INFO. Every line passes `scrub_text`: no known secret and no URL credentials.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from mcp_tools.util.secrets import scrub_text

OWN_LOGGER = "mcp_tools"
LIBRARY_LEVEL_ENV = "MCP_TOOLS_LIBRARY_LOG_LEVEL"
LEVEL_ENV = "MCP_TOOLS_LOG_LEVEL"
BODY_LOGGERS = (
    "sse_starlette",  # every streamed response chunk: tool results
    "mcp",  # messages as received and sent
    "botocore",  # S3 response bodies
    "urllib3",
    "urllib3_future",
    "caldav",  # CalDAV request and response bodies
    "httpx",
    "httpx2",
    "httpcore",
    "h11",
    "h2",
    "hpack",
    "googleapiclient",
    "google_auth_httplib2",
    "tavily",
)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class ScrubbingFormatter(logging.Formatter):
    """The whole formatted line, traceback included, without known secrets or URL credentials."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub_text(super().format(record))


def level_number(name: str | None, default: int) -> int:
    if not name:
        return default
    value = logging.getLevelName(name.strip().upper())
    return value if isinstance(value, int) else default


class _OwnHandler(logging.StreamHandler[TextIO]):
    """The stderr handler `configure_logging` installs, marked so a later call can replace it."""

    _mcp_tools = True


def configure_logging(level: str | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Set up (or re-level) stderr logging; `MCP_TOOLS_LOG_LEVEL` overrides `level`."""
    environ = os.environ if environ is None else environ
    own = level_number(environ.get(LEVEL_ENV) or level, logging.WARNING)
    libraries = level_number(environ.get(LIBRARY_LEVEL_ENV), max(own, logging.INFO))
    root = logging.getLogger()
    for stale in [h for h in root.handlers if getattr(h, "_mcp_tools", False)]:
        root.removeHandler(stale)  # its stream may be an earlier, closed sys.stderr
    handler = _OwnHandler(sys.stderr)
    handler.setFormatter(ScrubbingFormatter(FORMAT))
    root.addHandler(handler)
    root.setLevel(libraries)  # other libraries inherit this; ours is set on its own logger
    logging.getLogger(OWN_LOGGER).setLevel(own)
    for name in BODY_LOGGERS:
        logging.getLogger(name).setLevel(max(libraries, logging.INFO))
