"""`mcp-tools bundle`: the MCP Bundle Claude Desktop installs, checked with the official tool.

`@anthropic-ai/mcpb` (pinned in tests/mcpb, installed by `npm ci` into .pytest-npm/) validates
the manifest and unpacks the bundle as a host does; its own `getMcpConfigForManifest`, the
function hosts use, turns the manifest and a person's settings into the command, arguments and
environment (`${__dirname}` and `${user_config.*}` substituted). The server is then started with
exactly those, the Python a host finds as `python3`, and a host's small environment: no venv, no
PYTHONPATH, so everything it imports comes from the bundle.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_tools import __version__
from tests.approvals.fake_telegram import CHAT, TOKEN, FakeBotApi, running_fake
from tests.harness import failure, ok
from tests.npm_packages import npm_ci
from tests.processes import ROOT, child_env

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
PINNED = ROOT / "tests" / "mcpb"
PACKAGE = Path("node_modules", "@anthropic-ai", "mcpb")
CLI = PACKAGE / "dist" / "cli" / "cli.js"
HOST_CONFIG = """
const [library, manifestPath, dir, settings, home] = process.argv.slice(1);
const { getMcpConfigForManifest } = await import(library);
const { readFileSync } = await import("node:fs");
const config = await getMcpConfigForManifest({
  manifest: JSON.parse(readFileSync(manifestPath, "utf8")),
  extensionPath: dir,
  systemDirs: { HOME: home, DESKTOP: home + "/Desktop", DOCUMENTS: home + "/Documents", DOWNLOADS: home },
  userConfig: JSON.parse(settings),
  pathSeparator: "/",
});
console.log(JSON.stringify(config ?? null));
"""


@dataclass
class Mcpb:
    node: str
    prefix: Path

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.node, str(self.prefix / CLI), *args], capture_output=True, text=True, timeout=120, cwd=str(ROOT)
        )

    def host_config(self, unpacked: Path, settings: dict[str, Any], home: Path) -> dict[str, Any] | None:
        """What a host runs for these settings, as the library hosts use computes it."""
        library = (self.prefix / PACKAGE / "dist" / "index.js").as_uri()
        inputs = [str(unpacked / "manifest.json"), str(unpacked), json.dumps(settings), str(home)]
        done = subprocess.run(
            [self.node, "--input-type=module", "-e", HOST_CONFIG, library, *inputs],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        config: dict[str, Any] | None = json.loads(done.stdout)
        return config


@pytest.fixture(scope="module")
def mcpb() -> Mcpb:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("the MCP Bundle tool needs Node.js and npm on PATH (Debian: apt-get install nodejs npm)")
    return Mcpb(node, npm_ci(PINNED, CLI))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle `mcp-tools bundle` builds from this environment."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "mcp_tools", "bundle", "--out", str(out)],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=str(ROOT),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    built = out / f"mcp-tools-{__version__}.mcpb"
    assert f"Wrote {built}" in done.stdout
    return built


@pytest.fixture(scope="module")
def unpacked(bundle: Path, mcpb: Mcpb, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle unpacked by the official tool, as a host installs it."""
    target = tmp_path_factory.mktemp("extension") / "mcp-tools"
    done = mcpb.cli("unpack", str(bundle), str(target))
    assert done.returncode == 0, done.stdout + done.stderr
    return target


@pytest.fixture
def fake_bot() -> Iterator[FakeBotApi]:
    with running_fake() as api:
        yield api


def host_python(tmp_path: Path) -> Path:
    """A folder whose `python3` is this Python's own interpreter without the test venv, as a
    host finds `python3` on PATH."""
    folder = tmp_path / "host-bin"
    folder.mkdir()
    (folder / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    return folder


def host_env(config: dict[str, Any], home: Path, path: Path, **extra: str) -> dict[str, str]:
    """The environment a desktop host gives its servers: PATH, HOME and what the manifest names."""
    return {"PATH": f"{path}{os.pathsep}/usr/bin:/bin", "HOME": str(home), **config.get("env", {}), **extra}


def test_the_official_validator_passes_the_manifest(bundle: Path, mcpb: Mcpb, unpacked: Path) -> None:
    done = mcpb.cli("validate", str(unpacked / "manifest.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Manifest schema validation passes!" in done.stdout
    manifest = json.loads((unpacked / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["manifest_version"] == "0.3" and manifest["version"] == __version__
    assert manifest["server"]["type"] == "python" and (unpacked / manifest["server"]["entry_point"]).is_file()
    assert manifest["compatibility"]["platforms"] == [sys.platform]
    assert manifest["user_config"]["telegram_bot_token"]["sensitive"] is True
    assert manifest["user_config"]["files_folder"]["required"] is True
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
    assert "server/lib/mcp_tools/_configs/policy.toml" in names  # the policy defaults a wheel ships
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    assert any(name.startswith("server/lib/pydantic_core/") for name in names)  # the compiled part, bundled


async def test_the_unpacked_bundle_serves_the_persons_settings(
    unpacked: Path, mcpb: Mcpb, tmp_path: Path, fake_bot: FakeBotApi
) -> None:
    home = tmp_path / "home"
    files, vault = home / "Assistant", home / "Vault"
    files.mkdir(parents=True)
    vault.mkdir()
    (files / "plan.md").write_text("# Plan\n", encoding="utf-8")
    (vault / "Ideas.md").write_text("# Ideas\n\nA bundle for the desktop.\n", encoding="utf-8")
    settings = {
        "files_folder": str(files),
        "notes_vault": str(vault),
        "tools": "files,notes.core",
        "telegram_bot_token": TOKEN,
        "telegram_chat_id": CHAT,
    }
    config = mcpb.host_config(unpacked, settings, home)
    assert config is not None
    assert config["args"] == [str(unpacked / "server" / "main.py")]
    assert config["env"]["MCP_TOOLS_TELEGRAM_BOT_TOKEN"] == TOKEN  # in the environment, never in a file
    env = host_env(config, home, host_python(tmp_path), MCP_TOOLS_BUNDLE_TELEGRAM_API=fake_bot.base)
    params = StdioServerParameters(command=config["command"], args=config["args"], env=env, cwd=str(home))
    async with Client(params, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"files_read", "files_delete", "notes_search"} <= names
        assert not any(name.startswith("inbox_") for name in names)  # the tools setting: files and notes only
        assert ok(await client.call_tool("files_read", {"path": "plan.md"}))["content"] == "# Plan\n"
        listed = ok(await client.call_tool("files_list", {}))
        assert [entry["path"] for entry in listed["entries"]] == ["plan.md"]
        assert failure(await client.call_tool("files_read", {"path": "../Vault/Ideas.md"}))["kind"] in {
            "invalid_arguments",
            "denied_by_policy",
        }
        # A high-risk call waits for the person in Telegram: the bot the dialog named asks, and a press runs it.
        deleted: dict[str, Any] = {}

        async def delete() -> None:
            deleted["result"] = await client.call_tool("files_delete", {"path": "plan.md"})

        async with anyio.create_task_group() as group:
            group.start_soon(delete)
            message = await anyio.to_thread.run_sync(fake_bot.sent_with_buttons)
            assert message["chat"]["id"] == CHAT and "plan.md" in message["text"]
            fake_bot.press(message, "Approve")
        assert ok(deleted["result"]) and not (files / "plan.md").exists()
    written = [path for path in home.rglob("*") if path.is_file() and TOKEN.encode() in path.read_bytes()]
    assert written == []


def test_without_a_required_setting_it_says_what_is_missing(unpacked: Path, mcpb: Mcpb, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert mcpb.host_config(unpacked, {"notes_vault": str(home)}, home) is None  # a host does not start it
    # A host that starts it anyway passes the placeholder as written: the server names the setting.
    config = mcpb.host_config(unpacked, {"files_folder": "set"}, home)
    assert config is not None
    config["env"]["MCP_TOOLS_BUNDLE_FILES"] = "${user_config.files_folder}"
    done = subprocess.run(
        [config["command"], *config["args"]],
        input="",
        capture_output=True,
        text=True,
        env=host_env(config, home, host_python(tmp_path)),
        timeout=120,
    )
    assert done.returncode == 2
    assert "Files folder (files_folder) is empty" in done.stderr and "Configure" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_telegram_token_without_its_chat_says_so(unpacked: Path, mcpb: Mcpb, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = mcpb.host_config(unpacked, {"files_folder": str(home), "telegram_bot_token": TOKEN}, home)
    assert config is not None
    done = subprocess.run(
        [config["command"], *config["args"]],
        input="",
        capture_output=True,
        text=True,
        env=host_env(config, home, host_python(tmp_path)),
        timeout=120,
    )
    assert done.returncode == 2
    assert "Telegram bot token but no Telegram chat id" in done.stderr
    assert TOKEN not in done.stderr


def test_another_python_than_the_bundle_was_built_for_is_named(unpacked: Path, mcpb: Mcpb, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = mcpb.host_config(unpacked, {"files_folder": str(home)}, home)
    assert config is not None
    env = host_env(config, home, host_python(tmp_path), MCP_TOOLS_BUNDLE_PYTHON="3.99 plan9")
    done = subprocess.run(
        [config["command"], *config["args"]], input="", capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 2
    assert "built for Python 3.99 plan9" in done.stderr and "mcp-tools bundle" in done.stderr
