"""The `mcp-tools` command: the parser and `main` in `main`, one module per command group.

Heavy modules are imported inside the commands that need them, so `mcp-tools serve` loads no
other command's dependencies.
"""

from __future__ import annotations

from mcp_tools.cli.main import main

__all__ = ["main"]
