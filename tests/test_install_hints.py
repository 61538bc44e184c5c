"""The install command printed for a missing extra names what this installation came from, as
pip recorded it (PEP 610 `direct_url.json`): nothing of ours is on a package index yet, so the
project's name there is printed only for an install that came from one."""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.util import commands


class Recorded:
    """A distribution whose `direct_url.json` holds `direct` (None: pip recorded nothing)."""

    def __init__(self, direct: dict[str, Any] | None) -> None:
        self.direct = direct

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return json.dumps(self.direct) if self.direct is not None else None


@pytest.mark.parametrize(
    ("direct", "checkout", "printed"),
    [
        ({"url": "file:///home/me/mcp%20tools", "dir_info": {"editable": True}}, True, "-e '{checkout}[notes]'"),
        (None, True, "-e '{checkout}[notes]'"),  # run from the checkout, not installed
        ({"url": "file:///home/me/dist/mcp_tools_suite-0.1.0-py3-none-any.whl", "archive_info": {}}, False,
         "'/home/me/dist/mcp_tools_suite-0.1.0-py3-none-any.whl[notes]'"),
        ({"url": "file:///home/me/mcp%20tools", "dir_info": {}}, False, "'/home/me/mcp tools[notes]'"),
        ({"url": "https://example.org/mcp_tools_suite-0.1.0-py3-none-any.whl", "archive_info": {}}, False,
         "'mcp-tools-suite[notes] @ https://example.org/mcp_tools_suite-0.1.0-py3-none-any.whl'"),
        ({"url": "https://github.com/o/r", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}, False,
         "'mcp-tools-suite[notes] @ git+https://github.com/o/r@abc123'"),
        (None, False, "'mcp-tools-suite[notes]'"),  # from a package index: its name there
    ],
    ids=["editable", "checkout", "wheel", "directory", "remote-wheel", "git", "index"],
)  # fmt: skip
def test_the_extra_installs_from_where_this_installation_came_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, direct: dict[str, Any] | None, checkout: bool, printed: str
) -> None:
    monkeypatch.setattr(metadata, "distribution", lambda name: Recorded(direct))
    monkeypatch.setattr(commands, "source_checkout", lambda: tmp_path if checkout else None)
    hint = commands.pip_install("notes")
    pip = commands._pip()
    assert hint == f"{pip} install " + printed.format(checkout=tmp_path)


def test_not_installed_at_all_is_the_index_name(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    assert commands.installed_from() is None


def test_this_checkout_prints_itself() -> None:
    """This test environment is an editable install of the checkout the suite runs from."""
    root = Path(commands.__file__).resolve().parents[2]
    assert commands.installed_from() == (str(root), True)
    assert commands.pip_install("notes").endswith(f"install -e {shlex.quote(f'{root}[notes]')}")
    assert commands.pip_install("notes").startswith(("pip ", shlex.quote(sys.executable)))


@pytest.mark.parametrize(
    ("extra", "blocked", "args"),
    [
        ("metrics", "prometheus_client", ["serve", "--http", "--port", "0", "--metrics-port", "0"]),
        ("postgres", "psycopg", ["serve", "--http", "--port", "0"]),
    ],
    ids=["metrics", "postgres"],
)
def test_the_metrics_and_postgres_errors_name_this_installation(
    tmp_path: Path, extra: str, blocked: str, args: list[str]
) -> None:
    """`--metrics-port` without prometheus-client and a PostgreSQL state without psycopg say how to
    install the extra from this checkout, as `doctor` does, never a name no index holds."""
    from tests.test_setup import blocked_env, mcp_tools

    state = f'[state]\nurl = "postgresql://u:p@127.0.0.1:9/db"\nsecret = "{"s" * 40}"\n' if extra == "postgres" else ""
    path = tmp_path / "config.toml"
    path.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n{state}',
        encoding="utf-8",
    )
    result = mcp_tools(path, *args, env=blocked_env(tmp_path, blocked))
    assert result.returncode != 0
    assert commands.pip_install(extra) in result.stderr, result.stderr
    assert "mcp-tools-suite" not in result.stderr and "Traceback" not in result.stderr
