"""Shared fixtures: the anyio backend and the test-only `demo` namespace."""

from __future__ import annotations

import pytest

from mcp_tools.secrets import known_secrets
from mcp_tools.servers import CATALOG


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def demo_namespace(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the `demo` namespace selectable, for tests of the core alone."""
    monkeypatch.setitem(CATALOG, "demo", "tests.demo_namespace")
    return "demo"


@pytest.fixture(autouse=True)
def forget_known_secrets() -> None:
    """Each test starts with no known secrets: they are process-wide and would leak across tests."""
    known_secrets.clear()
