"""mcp_tools: one policy-gated MCP server over a person's accounts and data."""

__version__ = "0.1.0"
