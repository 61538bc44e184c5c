"""The Google family's shared plumbing: the account, its tokens and scopes, and calling the APIs.

Not a namespace (it is not in the catalog and declares no tools): gmail, drive, docs, sheets,
tasks and calendar's Google backend import it, and `[google]` is its shared section
(`mcp_tools.servers.SHARED_SECTIONS`). `config` and `scopes` import only pydantic; everything
that needs the Google libraries (`account`, `client`) is imported when a Google tool first runs.
"""
