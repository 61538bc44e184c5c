"""The tools each principal enabled through dynamic discovery, shared by every process."""

from __future__ import annotations

from mcp_tools.state.base import StoreBase


class EnabledTools(StoreBase):
    """The enabled-tools part of the state store."""

    def enabled_tools(self, principal: str, namespace: str | None = None) -> set[str]:
        """The canonical names the principal enabled (on one mounted namespace's endpoint, if given)."""
        principal, namespace = _principal_and_namespace(principal, namespace)
        with self._reading() as db:
            rows = db.execute(
                "SELECT tool FROM enabled_tools WHERE principal=? AND namespace=?", (principal, namespace)
            ).fetchall()
        return {row[0] for row in rows}

    def enable_tools(self, principal: str, tools: set[str], namespace: str | None = None) -> None:
        """Add to the principal's enabled tools (canonical names); enabling only ever grows the set."""
        principal, namespace = _principal_and_namespace(principal, namespace)
        with self._appending() as db:
            for tool in sorted(tools):
                db.execute(
                    "INSERT INTO enabled_tools (principal, namespace, tool) VALUES (?, ?, ?) "
                    "ON CONFLICT (principal, namespace, tool) DO NOTHING",
                    (principal, namespace, tool),
                )


def _principal_and_namespace(principal: str, namespace: str | None) -> tuple[str, str]:
    """The two columns of an enabled-tools key; `""` is the endpoint of every namespace. A principal
    is taken whole, newlines and all: it never names a namespace."""
    return principal, namespace or ""
