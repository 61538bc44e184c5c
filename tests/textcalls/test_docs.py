"""docs/text-calls.md: each format's example reply runs as written, with the command shown beside it."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from mcp_tools.textcalls import parse_reply
from tests.processes import bearer, demo_config, http_server, run_cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "text-calls.md"
BLOCK = re.compile(r"^(?P<fence>`{3,})(?P<label>\w*)\n(?P<body>.*?)\n(?P=fence)$", re.MULTILINE | re.DOTALL)


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"### {title}")
    end = text.find("\n#", start + 4)
    return text[start : end if end > 0 else len(text)]


def blocks(text: str, label: str) -> list[str]:
    return [match.group("body") for match in BLOCK.finditer(text) if match.group("label") == label]


EXAMPLES = [
    ("JSON in prose", "prose", ["files.read"]),
    ("Code blocks", "prose", ["files.write"]),
    ("Scissors-cat", "scissors", ["files.list", "files.read"]),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("docs-http")
    with http_server(demo_config(tmp_path, '[http.tokens]\nlaptop = "tok-docs-0123456789"\n', '["files"]')) as base:
        yield base


@pytest.mark.parametrize(("title", "shape", "tools"), EXAMPLES)
def test_each_format_example_posted_to_the_api(server: str, title: str, shape: str, tools: list[str]) -> None:
    [reply] = blocks(section(title), "text")
    headers = bearer("tok-docs-0123456789", **{"Content-Type": "text/plain"})
    response = httpx2.post(server + "/text-calls", content=reply.encode(), headers=headers, timeout=30)
    report = response.json()
    assert response.status_code == 200 and report["format"] == shape
    assert [call["name"] for call in report["calls"]] == tools


@pytest.mark.parametrize(("title", "shape", "tools"), EXAMPLES)
def test_each_format_example_runs_as_documented(tmp_path: Path, title: str, shape: str, tools: list[str]) -> None:
    text = section(title)
    [reply] = blocks(text, "text")
    command = shlex.split(blocks(text, "bash")[0])
    assert command[:3] == ["mcp-tools", "call-text", "reply.md"]
    parsed = parse_reply(reply)
    assert parsed.format == shape and not parsed.problems
    (tmp_path / "reply.md").write_text(reply, encoding="utf-8")
    config = demo_config(tmp_path, servers='["files"]')
    result = run_cli(config, "call-text", str(tmp_path / "reply.md"), *command[3:], "--output", "report")
    report = json.loads(result.stdout)
    assert [call["name"] for call in report["calls"]] == tools
    assert report["format"] == shape and report["parse_errors"] == []
    if shape == "scissors":
        assert report["markdown"].startswith("I'm checking your files now.")


def test_every_json_block_in_the_doc_parses() -> None:
    for body in blocks(DOC.read_text(encoding="utf-8"), "json"):
        json.loads(body)
