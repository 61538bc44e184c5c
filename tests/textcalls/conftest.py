"""Shared by the text-call tests: an app over real namespaces, and running a reply through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import App, build_app
from mcp_tools.policy.gate import Caller
from mcp_tools.textcalls import TextCallReport, run_reply
from tests.harness import make_config


def text_app(tmp_path: Path, servers: list[str], **policy: Any) -> App:
    return build_app(make_config(tmp_path, {"server": {"servers": servers}, "policy": policy}))


async def run(app: App, text: str, format: str = "auto", caller: Caller | None = None) -> TextCallReport:
    async with app.running():
        return await run_reply(app, text, caller or Caller(transport="text"), format)


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "data" / "files"
    root.mkdir(parents=True, exist_ok=True)
    (root / "keep.txt").write_text("precious")
    return root
