"""The real `mcp-tools` command (the demo namespace selectable) with its state store on a clock a
test moves: the file named by TASKS_TEST_CLOCK holds the seconds to add to the real time. The
test's own time passes only when it writes that file; nothing sleeps."""

import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp_tools.cli import main
from mcp_tools.servers import CATALOG
from mcp_tools.state import sqlite as store

CATALOG["demo"] = "tests.demo_namespace"
AHEAD = Path(os.environ["TASKS_TEST_CLOCK"])


def clock() -> float:
    try:
        return time.time() + float(AHEAD.read_text(encoding="utf-8") or 0)
    except (OSError, ValueError):
        return time.time()


opened = store.PolicyStore.__init__


def on_the_moved_clock(self: Any, path: Path, clock_: Any = clock) -> None:
    opened(self, path, clock_)


store.PolicyStore.__init__ = on_the_moved_clock  # type: ignore[method-assign]
sys.exit(main())
