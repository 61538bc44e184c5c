"""docs/architecture.md's "Add a namespace" steps, run as written.

The toy namespace is built from the document's own code blocks into a temporary folder that
joins `mcp_tools.servers`, registered in the catalog, and served to the SDK's real client: if
the walk-through stops working, this fails.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest

import mcp_tools.servers
from mcp_tools.servers import CATALOG
from tests.harness import connect, failure, ok

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
pytestmark = pytest.mark.anyio

FILE_LINE = re.compile(r"^`mcp_tools/servers/tally/(?P<name>\w+\.py)`:$")


def walkthrough_files() -> dict[str, str]:
    """File name -> source, from each ```python block the document introduces with its path."""
    lines = DOC.read_text(encoding="utf-8").split("\n")
    section = lines[lines.index("## Add a namespace") :]
    files: dict[str, str] = {}
    for index, line in enumerate(section):
        named = FILE_LINE.match(line)
        if named is None:
            continue
        assert section[index + 1] == "" and section[index + 2] == "```python", f"no code block after {line}"
        end = section.index("```", index + 3)
        files[named["name"]] = "\n".join(section[index + 3 : end]) + "\n"
    return files


@pytest.fixture
def tally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The walk-through's files in a folder of `mcp_tools.servers`, and its catalog line."""
    package = tmp_path / "servers" / "tally"
    package.mkdir(parents=True)
    for name, source in walkthrough_files().items():
        (package / name).write_text(source, encoding="utf-8")
    monkeypatch.setattr(mcp_tools.servers, "__path__", [*mcp_tools.servers.__path__, str(package.parent)])
    monkeypatch.setitem(CATALOG, "tally", "mcp_tools.servers.tally")
    yield
    for module in [name for name in sys.modules if name.startswith("mcp_tools.servers.tally")]:
        del sys.modules[module]


def test_the_walkthrough_shows_every_module_of_the_layout() -> None:
    assert sorted(walkthrough_files()) == ["__init__.py", "config.py", "models.py", "service.py", "tools.py"]


async def test_the_toy_namespace_is_served_with_its_low_and_high_risk_tools(tmp_path: Path, tally: None) -> None:
    async with connect(tmp_path, {"tally": {"start": 3}}) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"tally_show", "tally_reset"} <= set(listed)
        assert listed["tally_show"].annotations is not None
        assert listed["tally_show"].annotations.read_only_hint is True
        assert ok(await client.call_tool("tally_show", {})) == {"count": 3}


async def test_the_high_risk_tool_runs_only_after_the_person_says_yes(tmp_path: Path, tally: None) -> None:
    settings = {"tally": {"start": 3}}
    async with connect(tmp_path / "no", settings, elicit="decline") as client:
        failure(await client.call_tool("tally_reset", {"to": 0}))
        assert ok(await client.call_tool("tally_show", {})) == {"count": 3}
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path / "yes", settings, elicit="accept", seen=seen) as client:
        assert ok(await client.call_tool("tally_reset", {"to": 0})) == {"count": 0}
        assert ok(await client.call_tool("tally_show", {})) == {"count": 0}
    assert len(seen) == 1 and "Reset the count to 0" in seen[0].message


async def test_an_unknown_argument_is_refused_before_anything_runs(tmp_path: Path, tally: None) -> None:
    async with connect(tmp_path, {"tally": {"start": 3}}) as client:
        error = failure(await client.call_tool("tally_reset", {"to": 0, "force": True}))
        assert error["kind"] == "invalid_arguments"
        assert ok(await client.call_tool("tally_show", {})) == {"count": 3}
