"""First contact: what a newcomer sees in the first ten minutes, in real processes.

A missing optional library turns its namespace off with the exact install command; `serve` on a
terminal says what it waits for and quits on Ctrl-C; the Claude Desktop entry serves the config
in use; a tool of a namespace that is off says what to set; a built notes index reads as complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from mcp_tools.util.commands import pip_install
from tests.harness import failure
from tests.processes import ROOT, child_env

pytestmark = pytest.mark.anyio

# Makes the modules named in BLOCK_MODULES unimportable, as if their extra were not installed.
BLOCKER = """\
import os, sys
for name in os.environ.get("BLOCK_MODULES", "").split(","):
    if name:
        sys.modules[name] = None
"""


def notes_config(tmp_path: Path, notes: int = 3, extra: str = "") -> Path:
    """A config with a notes vault (and the embedded files and inbox), everything under tmp_path."""
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    for number in range(1, notes + 1):
        (vault / f"Note {number}.md").write_text(f"# Note {number}\n\nglacier fact {number}\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[notes]\nvault = "{vault}"\n' + extra,
        encoding="utf-8",
    )
    return config


def blocked_env(tmp_path: Path, *modules: str) -> dict[str, str]:
    folder = tmp_path / "blocker"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = child_env(BLOCK_MODULES=",".join(modules))
    env["PYTHONPATH"] = str(folder) + os.pathsep + env["PYTHONPATH"]
    return env


def mcp_tools(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_tools", "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=env or child_env(),
        cwd=str(ROOT),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


# -- a missing extra ------------------------------------------------------------------------


def test_the_blocker_really_hides_the_library(tmp_path: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import yaml"], capture_output=True, text=True, env=blocked_env(tmp_path, "yaml")
    )
    assert probe.returncode == 1 and "ModuleNotFoundError" in probe.stderr


def test_doctor_reports_a_namespace_without_its_library_as_off_with_the_install_command(tmp_path: Path) -> None:
    config = notes_config(tmp_path)
    result = mcp_tools(config, "doctor", env=blocked_env(tmp_path, "yaml"))
    assert result.returncode == 0, result.stderr
    notes_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("notes"))
    assert "off" in notes_line and "yaml" in notes_line
    assert pip_install("notes") in notes_line  # this checkout, never the index's unrelated `mcp-tools`
    assert "'mcp-tools[" not in notes_line and f"install -e '{ROOT}[notes]'" in notes_line
    assert "files     on" in result.stdout and "inbox     on" in result.stdout


def test_every_command_a_person_tries_answers_without_a_traceback(tmp_path: Path) -> None:
    config = notes_config(tmp_path)
    env = blocked_env(tmp_path, "yaml")
    index = mcp_tools(config, "notes", "index", env=env)
    assert index.returncode == 2
    assert pip_install("notes") in index.stderr
    call = mcp_tools(config, "call", "notes.search", "--args", '{"query": "glacier"}', "--json", env=env)
    assert call.returncode == 1
    error = json.loads(call.stdout)["error"]
    assert error["kind"] == "not_configured" and error["namespace"] == "notes"
    assert pip_install("notes") in error["message"]
    files = mcp_tools(config, "call", "files.list", "--json", env=env)
    assert files.returncode == 0, files.stderr
    for result in (index, call, files):
        assert "Traceback" not in result.stderr + result.stdout


async def test_serve_starts_the_other_namespaces_and_explains_the_missing_one(tmp_path: Path) -> None:
    config = notes_config(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_tools", "--config", str(config), "serve"],
        env=blocked_env(tmp_path, "yaml", "watchfiles"),
        cwd=str(ROOT),
    )
    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        error = failure(await client.call_tool("notes_search", {"query": "glacier"}))
        listed = await client.call_tool("files_list", {})
    assert "files_list" in names and "inbox_search" in names
    assert not any(name.startswith("notes_") for name in names)
    assert error["kind"] == "not_configured"
    assert "notes namespace, which is off" in error["message"] and pip_install("notes") in error["message"]
    assert not listed.is_error


def test_an_s3_store_without_boto3_is_off_with_the_install_command(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        '[files]\nbackend = "s3"\nbucket = "b"\n',
        encoding="utf-8",
    )
    result = mcp_tools(config, "doctor", env=blocked_env(tmp_path, "boto3"))
    assert result.returncode == 0, result.stderr
    assert pip_install("s3") in next(line for line in result.stdout.splitlines() if "files" in line)


def test_the_smtp_receiver_without_aiosmtpd_says_what_to_install(tmp_path: Path) -> None:
    config = notes_config(tmp_path, extra='[inbox]\naddresses = ["me@example.org"]\n')
    result = mcp_tools(config, "inbox", "smtp", "--listen", "127.0.0.1:0", env=blocked_env(tmp_path, "aiosmtpd"))
    assert result.returncode == 78
    assert pip_install("inbox") in result.stderr and "Traceback" not in result.stderr


# -- serve on a terminal --------------------------------------------------------------------


def read_line(fd: int, timeout: float) -> str:
    """One line from a pipe, or what came before the deadline."""
    import select

    seen = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        seen += chunk
    return seen.decode(errors="replace")


def test_serve_on_a_terminal_says_what_it_waits_for_and_quits_on_ctrl_c(tmp_path: Path) -> None:
    import pty

    config = tmp_path / "config.toml"
    config.write_text(f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n', encoding="utf-8")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_tools", "--config", str(config), "serve"],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=str(ROOT),
    )
    os.close(follower)
    try:
        assert process.stderr is not None
        line = read_line(process.stderr.fileno(), timeout=30)
        assert "waiting for an MCP client on stdio" in line
        assert f"mcp-tools --config {config} install claude-desktop" in line  # the same config as this server
        # Still an MCP server: a request typed on the terminal is answered there.
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        os.write(leader, json.dumps(request).encode() + b"\n")
        seen = b""
        deadline = time.monotonic() + 30
        while b'"serverInfo"' not in seen and time.monotonic() < deadline:
            seen += os.read(leader, 4096)
        assert b'"serverInfo"' in seen
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=10)
        elapsed = time.monotonic() - started
        rest = read_line(process.stderr.fileno(), timeout=1)
    finally:
        process.kill()
        os.close(leader)
    assert code == 130
    assert elapsed < 5
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest


# -- install claude-desktop -----------------------------------------------------------------


def test_install_claude_desktop_serves_the_config_in_use(tmp_path: Path) -> None:
    config = notes_config(tmp_path)
    claude = tmp_path / "claude" / "claude_desktop_config.json"
    # The config comes from the environment here, not from --config: the entry must still name it.
    env = child_env(MCP_TOOLS_CONFIG=str(config))
    printed = subprocess.run(
        [sys.executable, "-m", "mcp_tools", "install", "claude-desktop", "--claude-config", str(claude)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["mcp-tools"]
    assert entry["args"] == ["-m", "mcp_tools", "--config", str(config.resolve()), "serve"]
    assert str(claude) in printed.stderr and str(config) in printed.stderr
    assert not claude.exists()  # printing writes nothing


def test_install_claude_desktop_finds_the_default_config_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    default = home / ".config" / "mcp-tools" / "config.toml"
    default.parent.mkdir(parents=True)
    default.write_text('[server]\nlog_level = "info"\n', encoding="utf-8")
    env = child_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    printed = subprocess.run(
        [sys.executable, "-m", "mcp_tools", "install", "claude-desktop"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["mcp-tools"]
    assert entry["args"][-3:] == ["--config", str(default.resolve()), "serve"]
    assert str(home / ".config" / "Claude" / "claude_desktop_config.json") in printed.stderr


# -- tools that are not there ---------------------------------------------------------------


def test_a_tool_of_a_namespace_that_is_off_says_what_to_set(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n', encoding="utf-8")
    result = mcp_tools(config, "call", "calendar_create_event", "--args", '{"title": "x", "start": "2026-01-01"}')
    assert result.returncode == 1
    assert "calendar namespace, which is off" in result.stdout and "[calendar]" in result.stdout
    assert "unknown_tool" not in result.stdout


def test_an_unknown_tool_on_the_command_line_points_to_mcp_tools_tools(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n', encoding="utf-8")
    result = mcp_tools(config, "call", "files_raed", "--json")
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "unknown_tool"
    assert f"mcp-tools --config {config} tools`" in error["hint"] and "tools/list" not in error["hint"]
    assert "files_read" in error["hint"]  # the near miss is named


# -- the notes index across processes -------------------------------------------------------


def test_a_complete_index_reads_as_complete_in_the_next_process(tmp_path: Path) -> None:
    config = notes_config(tmp_path, notes=12)
    index = mcp_tools(config, "notes", "index")
    assert index.returncode == 0, index.stderr
    assert "12 notes in the index" in index.stdout
    search = mcp_tools(config, "call", "notes.search", "--args", '{"query": "glacier"}', "--json")
    assert search.returncode == 0, search.stderr
    result = json.loads(search.stdout)
    assert result["index"]["complete"] is True
    assert result["index"]["indexed"] == result["index"]["total"] == 12
    assert "partial" not in (result["note"] or "")
