"""Run the real `mcp-tools` command with the test-only `demo` namespace selectable."""

import sys

from mcp_tools.cli import main
from mcp_tools.servers import CATALOG

CATALOG["demo"] = "tests.demo_namespace"
sys.exit(main())
