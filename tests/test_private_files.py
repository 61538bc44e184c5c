"""The server's state is readable by its own user alone: proven by reading it as another user.

The state dir held recent audit rows with their arguments (`policy.sqlite3-wal`), whole mail bodies
(`inbox/inbox.sqlite3`) and the text of a private vault (the notes index's `-wal`) at 0644 in a
0755 folder. A reader running as `nobody` must find none of the files it can open."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_tools.composition.app import build_app
from mcp_tools.transports.mcp_server import build_server
from tests.harness import make_config, ok
from tests.servers.inbox.fixtures import INBOX_ADDRESS, simple
from tests.servers.notes.fixtures import wait_indexed, write_vault

pytestmark = pytest.mark.anyio
OTHER_UID = 65534  # nobody

READER = """
import os, sys
readable = []
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        readable.append(path)
    except OSError:
        pass
    try:
        os.listdir(path)
        readable.append(path)
    except OSError:
        pass
print("\\n".join(readable))
"""


def read_as_other_user(paths: list[Path]) -> list[str]:
    """The paths a process of another uid can open or list."""
    if os.geteuid() != 0:
        pytest.skip("reading as another user needs root to switch to it")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    python = next((path for path in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(path, os.X_OK)), None)
    if python is None:
        pytest.skip("no system python3 another user can run")
    command = [setpriv, f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", python, "-c", READER]
    done = subprocess.run([*command, *map(str, paths)], capture_output=True, text=True, timeout=60, check=True)
    return [line for line in done.stdout.splitlines() if line]


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder every user can pass through (pytest's own temporary folders are 0700), so only the
    modes of what the server creates stand between another user and the state."""
    base = Path(tempfile.mkdtemp(prefix="mcp-tools-modes-"))
    base.chmod(0o711)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def every_path(*folders: Path) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        found.append(folder)
        found.extend(folder.rglob("*"))
    return found


async def test_another_user_can_read_no_state_the_server_writes(
    reachable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = write_vault(reachable / "vault")
    vault.chmod(0o700)
    files_root = reachable / "files"
    settings = {
        "server": {
            "servers": ["notes", "inbox", "files"],
            "state_dir": str(reachable / "state"),
            "data_dir": str(reachable / "data"),
        },
        "notes": {"vault": str(vault), "watch": False},
        "inbox": {"addresses": [INBOX_ADDRESS]},
        "files": {"root": str(files_root)},
    }
    previous = os.umask(0o022)  # what a shell usually gives a server
    try:
        app = build_app(make_config(reachable, settings))
        try:
            async with app.running(), Client(build_server(app, "test")) as client:
                await wait_indexed(client)
                await app.services["inbox"].ingest(simple(), via="smtp")
                assert ok(await client.call_tool("inbox_search", {}))
                ok(await client.call_tool("files_write", {"path": "a.txt", "content": "x"}))
                from mcp_tools.state.store import AuditRow

                assert app.store.spool_audit(
                    AuditRow(1.0, "t", "p", "demo.x", {"secret": "s"}, "medium", "ran", None, 1, "ok")
                )
                state = reachable / "state"
                wal = [path.name for path in state.rglob("*-wal")]
                assert "policy.sqlite3-wal" in wal and "index.sqlite3-wal" in wal  # the files the attack read
                assert (state / "inbox" / "inbox.sqlite3").exists() and (state / "audit-spool.jsonl").exists()
                paths = [path for path in every_path(state, reachable / "data") if not path.is_relative_to(files_root)]
                assert read_as_other_user(paths) == []
                loose = [str(path) for path in paths if stat.S_IMODE(path.lstat().st_mode) & 0o077]
                assert loose == []
        finally:
            app.store.close()
    finally:
        os.umask(previous)


async def test_state_an_older_version_left_readable_is_narrowed_at_start(
    reachable: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = reachable / "state"
    (state / "notes").mkdir(parents=True)
    state.chmod(0o755)
    (state / "notes").chmod(0o755)
    for name in ("policy.sqlite3-wal", "notes/index.sqlite3-wal", "http-token"):
        (state / name).write_text("old")
        (state / name).chmod(0o644)
    previous = os.umask(0o022)
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_tools.state"):
            app = build_app(make_config(reachable, {"server": {"servers": [], "state_dir": str(state)}}))
        app.store.close()
    finally:
        os.umask(previous)
    assert read_as_other_user(every_path(state)) == []
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "notes" / "index.sqlite3-wal").stat().st_mode) == 0o600
    assert any("readable by their owner only" in record.getMessage() for record in caplog.records)


def test_config_init_writes_a_config_and_folder_only_its_user_reads(reachable: Path) -> None:
    from tests.cli.test_cli import run_cli

    path = reachable / "cfg" / "config.toml"
    previous = os.umask(0o022)  # inherited by the command, as from a shell
    try:
        assert run_cli(path, "config", "init").returncode == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_as_other_user([path.parent, path]) == []
