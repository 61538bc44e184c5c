"""ATTACK: a file store whose root exposes our own config, state or data, or the home
directory's credentials, would let a medium-risk write rewrite the policy; it is refused at start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.files import create
from mcp_tools.servers.files.config import FilesConfig
from tests.processes import ROOT, child_env

CONFIG = '[files]\nroot = "~"\n'


def cli_in_home(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a new user runs it: no --config, everything found from HOME."""
    env = {key: value for key, value in child_env(HOME=str(home)).items() if not key.startswith("XDG_")}
    return subprocess.run(
        [sys.executable, "-m", "mcp_tools", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=60,
    )


def test_a_root_at_home_cannot_read_or_rewrite_the_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".config" / "mcp-tools" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG)
    read = cli_in_home(home, "call", "files.read", "--args", '{"path": ".config/mcp-tools/config.toml"}', "--json")
    assert read.returncode != 0
    error = json.loads(read.stdout)["error"]
    assert error["kind"] == "not_configured"
    assert "[files] root" in error["message"] and "choose a folder of its own" in error["message"]
    assert "sha256" not in read.stdout
    rules = '[[policy.rules]]\nmatch = "*"\nrisk = "low"\n'
    write = cli_in_home(
        home, "call", "files.write", "--args", json.dumps({"path": ".config/mcp-tools/config.toml", "content": rules})
    )
    assert write.returncode != 0
    assert config.read_text() == CONFIG
    doctor = cli_in_home(home, "doctor")
    assert "[files] root" in doctor.stdout + doctor.stderr


def environment(tmp_path: Path) -> Environment:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    return Environment(
        data_dir=home / ".local" / "share" / "mcp-tools",
        state_dir=home / ".local" / "state" / "mcp-tools",
        env={"HOME": str(home)},
        config_file=home / ".config" / "mcp-tools" / "config.toml",
    )


def test_the_default_root_still_serves(tmp_path: Path) -> None:
    env = environment(tmp_path)
    service = create(FilesConfig(), env)
    assert service is not None
    assert (env.data_dir / "files").is_dir()


def test_a_root_inside_a_shared_data_and_state_folder_still_serves(tmp_path: Path) -> None:
    assert create(FilesConfig(), Environment(data_dir=tmp_path, state_dir=tmp_path)) is not None


@pytest.mark.parametrize(
    "root",
    [
        "home",  # holds .ssh and every other credential folder
        "home/.ssh",
        "home/.config",  # holds the config folder
        "home/.config/mcp-tools/store",  # inside the config folder, a credential-class folder
        "home/.local/share",  # holds the data folder
        "home/.local/state/mcp-tools/approvals",  # inside the state folder
    ],
)
def test_a_root_exposing_a_protected_folder_is_refused(tmp_path: Path, root: str) -> None:
    with pytest.raises(NotConfigured, match=r"\[files\] root .* would expose"):
        create(FilesConfig(root=tmp_path / root), environment(tmp_path))


def test_a_root_holding_the_state_folder_through_a_symlink_is_refused(tmp_path: Path) -> None:
    """The root is a link to a folder that holds the state folder: compared by real paths too."""
    env = Environment(data_dir=tmp_path / "data", state_dir=tmp_path / "elsewhere" / "state")
    env.state_dir.mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", tmp_path / "shelf")
    with pytest.raises(NotConfigured, match="would expose"):
        create(FilesConfig(root=tmp_path / "shelf"), env)


def test_a_state_folder_named_through_a_symlink_inside_the_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "store" / "state").mkdir(parents=True)
    os.symlink(tmp_path / "store", tmp_path / "via")
    env = Environment(data_dir=tmp_path / "data", state_dir=tmp_path / "via" / "state")
    with pytest.raises(NotConfigured, match="would expose"):
        create(FilesConfig(root=tmp_path / "store"), env)
