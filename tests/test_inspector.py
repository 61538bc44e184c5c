"""The real MCP Inspector CLI against `mcp-tools serve`, over stdio and over HTTP.

The Inspector validates results against the tools' output schemas, so it is the client that
shows whether an error result can be read at all. Its version is pinned by
`tests/inspector/package-lock.json`; the first test of a session installs it with `npm ci` into
`.pytest-npm/` (reused while the lock file is unchanged). Without npm the tests are skipped.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.npm_packages import npm_ci
from tests.processes import ROOT, bearer, child_env, cli_in_process, http_server, write_config
from tests.results import error_payload

pytestmark = pytest.mark.slow
PINNED = ROOT / "tests" / "inspector"
TOKEN = "tok-inspector-0123456789abcdef"
LAUNCHER = Path("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
EXIT_TOOL_ERROR = 5  # the Inspector CLI's exit code for a result with isError: true


@dataclass
class Inspector:
    node: str
    launcher: Path
    home: Path

    def run(self, *args: str) -> tuple[int, dict[str, Any] | None, str]:
        """Run `mcp-inspector --cli ARGS`; returns the exit code, the printed result, and stderr."""
        env = child_env(HOME=str(self.home), MCP_INSPECTOR_SECRET_STORE="memory")
        env["MCP_CATALOG_PATH"] = str(self.home / "catalog.json")
        done = subprocess.run(
            [self.node, str(self.launcher), "--cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(ROOT),
            timeout=120,
        )
        try:
            result = json.loads(done.stdout) if done.stdout.strip() else None
        except ValueError:
            raise AssertionError(f"the Inspector printed no JSON: {done.stdout!r} {done.stderr!r}") from None
        return done.returncode, result, done.stderr


def install_pinned_inspector() -> Path:
    """The pinned Inspector's launcher, installed into .pytest-npm/ once."""
    return npm_ci(PINNED, LAUNCHER) / LAUNCHER


@pytest.fixture(scope="session")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Inspector:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("the MCP Inspector CLI needs Node.js and npm on PATH (Debian: apt-get install nodejs npm)")
    return Inspector(node=node, launcher=install_pinned_inspector(), home=tmp_path_factory.mktemp("inspector-home"))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Only the files namespace, all of its tools served, with one file to delete and edit."""
    files = tmp_path / "data" / "files"
    files.mkdir(parents=True)
    (files / "report.md").write_text("# Q3\n\nDraft.\n", encoding="utf-8")
    return write_config(
        tmp_path / "config.toml",
        f'[server]\nservers = ["files"]\ntools = ["files"]\n'
        f'state_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[http.tokens]\ninspector = "{TOKEN}"\n',
    )


def stdio_target(config: Path) -> list[str]:
    return ["--", sys.executable, "-m", "mcp_tools", "--config", str(config), "serve"]


def pending_approvals(config: Path) -> list[dict[str, Any]]:
    listed = cli_in_process(config, "approvals", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


def check_error_results(inspector: Inspector, config: Path, connection: list[str], target: list[str]) -> None:
    """What a person using the Inspector must see: the approval id, and a not_found with its hint."""
    code, result, stderr = inspector.run(
        *connection, "--method", "tools/call", "--tool-name", "files_delete", "--tool-arg", "path=report.md", *target
    )
    assert code == EXIT_TOOL_ERROR, stderr
    assert result is not None and result["isError"] is True and "structuredContent" not in result
    approval = error_payload_of(result)
    assert approval["kind"] == "approval_required"
    assert approval["approval_id"] in approval["message"] and approval["approval_id"] in approval["hint"]
    assert [item["id"] for item in pending_approvals(config)] == [approval["approval_id"]]
    assert (config.parent / "data" / "files" / "report.md").exists()

    edit = json.dumps({"path": "report.md", "edits": [{"old_string": "Final.", "new_string": "Done."}]})
    code, result, stderr = inspector.run(
        *connection, "--method", "tools/call", "--tool-name", "files_edit", "--tool-args-json", edit, *target
    )
    assert code == EXIT_TOOL_ERROR, stderr
    assert result is not None
    missing = error_payload_of(result)
    assert missing["kind"] == "not_found" and "old_string was not found" in missing["message"]
    assert "read the file again" in missing["hint"]

    assert cli_in_process(config, "approvals", "approve", approval["approval_id"]).returncode == 0
    code, result, stderr = inspector.run(
        *connection, "--method", "tools/call", "--tool-name", "files_delete", "--tool-arg", "path=report.md", *target
    )
    assert code == 0, stderr
    assert result is not None and result["structuredContent"]["path"] == "report.md"
    assert not (config.parent / "data" / "files" / "report.md").exists()


def error_payload_of(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON error object the Inspector printed, checked against the one error shape."""
    import mcp_types as types

    parsed = types.CallToolResult.model_validate(result)
    error: dict[str, Any] = error_payload(parsed)["error"]
    return error


def check_tool_list(inspector: Inspector, connection: list[str], target: list[str]) -> None:
    code, result, stderr = inspector.run(*connection, "--method", "tools/list", "--strict", *target)
    assert code == 0, stderr  # --strict: exit 6 on any error-severity schema portability problem
    # and not even a warning: --strict writes each finding (a `type` array, say) as "Warning: tool ..."
    assert "Warning:" not in stderr and "Schema portability" not in stderr, stderr
    assert result is not None
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert {"files_read", "files_edit", "files_delete"} <= set(tools)
    assert all("outputSchema" in tool for tool in tools.values())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_over_stdio_the_inspector_lists_tools_and_shows_errors(inspector: Inspector, config: Path, era: str) -> None:
    connection = ["--protocol-era", era]
    check_tool_list(inspector, connection, stdio_target(config))
    check_error_results(inspector, config, connection, stdio_target(config))


@pytest.fixture
def http_base(config: Path) -> Iterator[str]:
    with http_server(config) as base:
        yield base


def test_over_http_the_inspector_lists_tools_and_shows_errors(
    inspector: Inspector, config: Path, http_base: str
) -> None:
    connection = [f"{http_base}/mcp", "--header", f"Authorization: {bearer(TOKEN)['Authorization']}"]
    check_tool_list(inspector, connection, [])
    check_error_results(inspector, config, connection, [])


def test_over_http_without_the_token_the_inspector_gets_nothing(inspector: Inspector, http_base: str) -> None:
    code, result, stderr = inspector.run(
        f"{http_base}/mcp", "--method", "tools/call", "--tool-name", "files_read", "--tool-arg", "path=report.md"
    )
    assert code != 0 and result is None
    assert "Draft." not in stderr


def test_the_google_namespaces_pass_the_inspector_over_stdio(
    inspector: Inspector, tmp_path: Path, google: Any, drive: Any, docs: Any, sheets: Any, tasks: Any, gcal: Any
) -> None:
    """drive, docs, sheets, tasks and the Google calendar against the fake Google, in a real server
    process: portable schemas (--strict), successes the Inspector validates, and error results."""
    from mcp_tools.servers.google import scopes
    from tests.servers.docs.fixtures import planning_doc
    from tests.servers.gmail.fixtures import sign_in

    drive.add("notes.txt", "hello from Drive")
    document = planning_doc(docs)
    book = sheets.add("Budget", {"Data": [["Name", "Amount"], ["Ann", 12.5], ["=IMPORTXML(1)", True]]})
    tasks.add("Pay rent", due="2026-03-05T00:00:00.000Z")
    gcal.add_calendar("Assistant")
    granted = [
        scopes.DRIVE_FILE,
        scopes.TASKS,
        scopes.CALENDAR_READONLY,
        scopes.CALENDAR_EVENTS,
        scopes.CALENDAR_FREEBUSY,
    ]
    settings = sign_in(tmp_path, google, granted)
    config = write_config(
        tmp_path / "config.toml",
        '[server]\nservers = ["drive", "docs", "sheets", "tasks", "calendar"]\ntools = ["*"]\n'
        f'state_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\napi_endpoint = "{google.url}"\n'
        '[calendar]\nbackend = "google"\ncalendar = "Assistant"\ntimezone = "Europe/Berlin"\n',
    )
    target = stdio_target(config)

    code, listed, stderr = inspector.run("--method", "tools/list", "--strict", *target)
    assert code == 0, stderr
    assert listed is not None
    names = {tool["name"].split("_", 1)[0] for tool in listed["tools"]}
    assert names == {"drive", "docs", "sheets", "tasks", "calendar"}

    def call(tool: str, **arguments: Any) -> tuple[int, dict[str, Any]]:
        code, result, stderr = inspector.run(
            "--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments), *target
        )
        assert result is not None, stderr
        return code, result

    code, found = call("drive_search", name="notes")
    assert code == 0 and [item["name"] for item in found["structuredContent"]["files"]] == ["notes.txt"]
    code, read = call("docs_read", id=document.id)
    assert code == 0 and "Project plan" in read["structuredContent"]["text"]
    code, rows = call("sheets_read", id=book.id, range="Data")
    assert code == 0 and rows["structuredContent"]["values"][2] == ["=IMPORTXML(1)", "TRUE"]
    code, listed_tasks = call("tasks_list", list="@default")
    assert code == 0 and listed_tasks["structuredContent"]["tasks"][0]["due"] == "2026-03-05"
    code, busy = call("calendar_availability", start="2026-03-02", end="2026-03-03")
    assert code == 0 and busy["structuredContent"]["busy"] == []

    code, clear = call("sheets_clear", id=book.id, range="Data")
    assert code == EXIT_TOOL_ERROR and "structuredContent" not in clear
    approval = error_payload_of(clear)
    assert approval["kind"] == "approval_required" and "cell(s) hold data" in approval["message"]
    code, missing = call("docs_read", id="1NoSuchDocument")
    assert code == EXIT_TOOL_ERROR and error_payload_of(missing)["kind"] == "not_found"
    assert google.violations == []


# -- the Inspector examples in the docs, as written ---------------------------------------------

NPX = re.compile(r"^npx (?P<package>@modelcontextprotocol/inspector\S*)(?P<rest>.*)$")


def inspector_examples() -> list[tuple[str, str]]:
    """Every `npx @modelcontextprotocol/inspector ...` command in README.md and docs/ (continuations joined)."""
    from tests.test_docs import BLOCKS

    found = []
    for block in BLOCKS:
        if block.lang not in ("bash", "sh", "shell"):
            continue
        for line in block.text.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if NPX.match(line):
                found.append((block.where, line))
    return found


def test_the_docs_pin_the_inspector_the_tests_run() -> None:
    pinned = json.loads((PINNED / "package.json").read_text())["dependencies"]["@modelcontextprotocol/inspector"]
    examples = inspector_examples()
    assert len(examples) >= 3
    for where, line in examples:
        match = NPX.match(line)
        assert match is not None and match["package"] == f"@modelcontextprotocol/inspector@{pinned}", where
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    engines = json.loads((PINNED / "package-lock.json").read_text())["packages"][
        "node_modules/@modelcontextprotocol/inspector"
    ]["engines"]["node"]
    assert f"Node.js {engines.removeprefix('>=').rsplit('.', 1)[0]} or later" in readme  # the Node it needs


def test_the_inspector_cli_examples_in_the_docs_run_as_written(inspector: Inspector, tmp_path: Path) -> None:
    """Each `--cli` example, with `npx <pinned>` being the installed pinned Inspector, `.venv/bin/mcp-tools`
    this environment's, and the HTTP server of the example on a free port instead of 8765."""
    home = tmp_path / "home"
    files = tmp_path / "data" / "files"
    files.mkdir(parents=True)
    (files / "notes.txt").write_text("from the docs\n", encoding="utf-8")
    state = {"MCP_TOOLS_STATE_DIR": str(tmp_path / "state"), "MCP_TOOLS_DATA_DIR": str(tmp_path / "data")}
    token = "tok-docs-example-0123456789"
    mcp_tools = str(Path(sys.executable).parent / "mcp-tools")
    examples = [(where, line) for where, line in inspector_examples() if " --cli " in line]
    assert examples
    config = write_config(tmp_path / "empty.toml", "")
    with http_server(config, MCP_TOOLS_HTTP_TOKEN_LAPTOP=token, **state) as base:
        for where, line in examples:
            words = shlex.split(NPX.match(line)["rest"])  # type: ignore[index]
            words = [mcp_tools if word == ".venv/bin/mcp-tools" else word for word in words]
            words = [word.replace("http://127.0.0.1:8765", base) for word in words]
            words = [word.replace("$MCP_TOOLS_HTTP_TOKEN_LAPTOP", token) for word in words]
            assert words[0] == "--cli", where
            env = child_env(HOME=str(home), MCP_INSPECTOR_SECRET_STORE="memory", **state)
            env["MCP_CATALOG_PATH"] = str(home / "catalog.json")
            done = subprocess.run(
                [inspector.node, str(inspector.launcher), *words],
                capture_output=True,
                text=True,
                env=env,
                cwd=str(tmp_path),
                timeout=120,
            )
            assert done.returncode == 0, f"{where}: {line}\n{done.stderr}"
            result = json.loads(done.stdout)
            if "tools" in result:
                assert "files_read" in {tool["name"] for tool in result["tools"]}, where
            else:
                assert result["structuredContent"]["content"] == "from the docs\n", where
