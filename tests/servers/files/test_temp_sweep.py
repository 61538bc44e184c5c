"""Temp files of writes a crash interrupted are swept at start-up, in the file store and the notes vault."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.util.sandbox import STALE_TEMP_SECONDS, TEMP_SUFFIX, sweep_temp_files
from tests.harness import make_config
from tests.servers.notes.fixtures import write_vault

pytestmark = pytest.mark.anyio
HOUR_AGO = time.time() - 3600


def leftovers(folder: Path) -> dict[str, Path]:
    """A stale temp file (a crash an hour ago), a fresh one (a write in progress), and look-alikes."""
    (folder / "sub").mkdir(parents=True, exist_ok=True)
    paths = {
        "stale": folder / f".report.md.0a1b2c3d4e5f{TEMP_SUFFIX}",
        "stale_deep": folder / "sub" / f".x.bin.ffffffffffff{TEMP_SUFFIX}",
        "fresh": folder / f".draft.md.123456abcdef{TEMP_SUFFIX}",
        "visible": folder / f"keep{TEMP_SUFFIX}",  # not a name atomic_write makes
        "folder": folder / f".dir{TEMP_SUFFIX}",
    }
    for name, path in paths.items():
        if name == "folder":
            path.mkdir()
        else:
            path.write_bytes(b"partial" * 1000)
        if name != "fresh":
            os.utime(path, (HOUR_AGO, HOUR_AGO))
    return paths


def test_only_stale_temp_files_go(tmp_path: Path) -> None:
    paths = leftovers(tmp_path)
    outside = tmp_path.parent / f".outside{TEMP_SUFFIX}"
    outside.write_bytes(b"x")
    os.utime(outside, (HOUR_AGO, HOUR_AGO))
    (tmp_path / "link").symlink_to(tmp_path.parent, target_is_directory=True)
    try:
        assert sweep_temp_files(tmp_path) == 2
        assert outside.exists()  # a symlink out is never followed
    finally:
        outside.unlink()
    assert not paths["stale"].exists() and not paths["stale_deep"].exists()
    assert paths["fresh"].exists() and paths["visible"].exists() and paths["folder"].is_dir()
    assert STALE_TEMP_SECONDS <= 15 * 60


async def wait_gone(path: Path) -> None:
    with anyio.fail_after(10):
        while path.exists():
            await anyio.sleep(0.02)


async def test_the_file_store_sweeps_at_start_up(tmp_path: Path) -> None:
    root = tmp_path / "files"
    paths = leftovers(root)
    app = build_app(make_config(tmp_path, {"server": {"servers": ["files"]}, "files": {"root": str(root)}}))
    assert paths["stale"].exists()  # building the app stays cheap; the sweep runs with the server
    async with app.running():
        await wait_gone(paths["stale"])
        await wait_gone(paths["stale_deep"])
    assert paths["fresh"].exists()


async def test_the_notes_vault_sweeps_at_start_up(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")
    paths = leftovers(vault / "Projects")
    app = build_app(make_config(tmp_path, {"server": {"servers": ["notes"]}, "notes": {"vault": str(vault)}}))
    async with app.running():
        await wait_gone(paths["stale"])
        await wait_gone(paths["stale_deep"])
    assert paths["fresh"].exists()
