"""`python -m mcp_tools` is the `mcp-tools` command."""

import sys

from mcp_tools.cli import main

sys.exit(main())
