"""What clients talk to: the MCP server, Streamable HTTP and its limits, stdio."""
