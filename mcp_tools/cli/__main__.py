"""`python -m mcp_tools.cli`, the same as `mcp-tools`."""

import sys

from mcp_tools.cli.main import main

sys.exit(main())
