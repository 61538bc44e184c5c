"""`python -m mcp_tools` is the `mcp-tools` command."""

import gc
import sys

gc.disable()  # start-up only allocates: `main` turns collection back on (see mcp_tools.cli.serve.serving)

from mcp_tools.cli import main  # noqa: E402

sys.exit(main())
