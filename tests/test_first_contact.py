"""A newcomer's first contact, run as written rather than checked for shape.

The Claude Desktop entry is spawned the way the desktop client spawns it (no shell, its own
small environment, another working directory); every command the CLI prints for a person is run
exactly as printed; `doctor` diagnoses every TOML example in the docs; the published figures
match what `tools --budget --json` measures; the README's first command installs and serves in
a fresh copy of the checkout, and a built wheel installs and serves in a fresh virtualenv. The
installs run offline: pip is given no index, and the dependencies come from this test
environment (what a person's pip would download).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mcp_tools.cli import main
from mcp_tools.servers import CATALOG
from mcp_tools.transports import budget
from mcp_tools.util.commands import DISTRIBUTION
from tests.processes import ROOT, child_env, demo_config, free_port, http_server, run_cli, write_config
from tests.test_docs import BLOCKS, Block
from tests.test_setup import blocked_env, notes_config, read_line

pytestmark = pytest.mark.anyio
DESKTOP_PATH = "/usr/bin:/bin"  # what a desktop app started from the dock has; no venv on it


def desktop_env(home: Path) -> dict[str, str]:
    """The environment a desktop client gives a server it spawns: a home, a bare PATH, nothing of ours."""
    return {"HOME": str(home), "PATH": DESKTOP_PATH, "LANG": "C"}


async def tool_names(command: str, args: list[str], env: dict[str, str], cwd: str) -> set[str]:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    async with Client(params) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


# -- the Claude Desktop entry -----------------------------------------------------------------


@pytest.mark.parametrize("with_config", [True, False], ids=["config-with-spaces", "embedded-defaults"])
async def test_the_claude_desktop_entry_starts_as_the_desktop_client_spawns_it(
    tmp_path: Path, with_config: bool
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    support = tmp_path / "Application Support" / "mcp tools"  # spaces, as on macOS
    claude = support / "Claude" / "claude_desktop_config.json"
    command = [sys.executable, "-m", "mcp_tools", "install", "claude-desktop", "--claude-config", str(claude)]
    if with_config:
        config = support / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            f'[server]\nservers = ["files"]\nstate_dir = "{support / "state"}"\ndata_dir = "{support / "data"}"\n',
            encoding="utf-8",
        )
        command += ["--config", str(config)]  # after the command, as people write it
    printed = subprocess.run(command, capture_output=True, text=True, env=desktop_env(home), cwd="/", timeout=60)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["mcp-tools"]
    written = subprocess.run([*command, "--write"], capture_output=True, text=True, env=desktop_env(home), timeout=60)
    assert written.returncode == 0, written.stderr
    assert json.loads(claude.read_text(encoding="utf-8"))["mcpServers"]["mcp-tools"] == entry

    names = await tool_names(entry["command"], entry["args"], desktop_env(home), "/")
    assert "files_read" in names
    if with_config:
        assert not any(name.startswith("inbox_") for name in names)  # the config's servers = ["files"]
        assert (support / "state" / "policy.sqlite3").exists()
    else:
        assert "inbox_search" in names and "--config" not in entry["args"]


def claude_entries_in_the_docs() -> list[Any]:
    from tests.test_docs import json_values

    found = []
    for block in BLOCKS:
        if block.lang == "json":
            for value in json_values(block.text):
                if isinstance(value, dict) and "mcpServers" in value:
                    found += [pytest.param(entry, id=block.where) for entry in value["mcpServers"].values()]
    return found


@pytest.mark.parametrize("entry", claude_entries_in_the_docs())
async def test_the_claude_desktop_entries_in_the_docs_start(entry: dict[str, Any], tmp_path: Path) -> None:
    """The docs' entries, with their example paths made real: this Python and a config (with a space)."""
    (tmp_path / "mcp tools").mkdir()
    config = write_config(
        tmp_path / "mcp tools" / "config.toml",
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n',
    )
    assert entry["command"].endswith("/.venv/bin/python")
    args = [str(config) if arg.endswith("config.toml") else arg for arg in entry["args"]]
    env = desktop_env(tmp_path / "home") | {"MCP_TOOLS_TELEGRAM_BOT_TOKEN": "1:fake"}
    names = await tool_names(sys.executable, args, env, "/")
    assert "files_read" in names


# -- every command the CLI prints for a person, run as printed ----------------------------------


def run_printed(command: str, env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """A command line the CLI printed, run as a shell would split it, with no shell."""
    return subprocess.run(shlex.split(command), capture_output=True, text=True, env=env, timeout=120, **kwargs)


def test_the_serve_banner_commands_run_as_printed_where_mcp_tools_is_not_on_path(tmp_path: Path) -> None:
    import pty

    config = write_config(
        tmp_path / "my config.toml", f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n'
    )
    env = desktop_env(tmp_path)
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_tools", "serve", "--config", str(config)],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    try:
        assert process.stderr is not None
        banner = read_line(process.stderr.fileno(), timeout=30)
    finally:
        process.kill()
        process.wait()
        os.close(leader)
    install, inspector = re.findall(r"`([^`]+)`", banner)
    printed = run_printed(install, env)
    assert printed.returncode == 0, printed.stderr
    assert str(config.resolve()) in json.loads(printed.stdout)["mcpServers"]["mcp-tools"]["args"]
    npx, package, *server = shlex.split(inspector)
    pinned = json.loads((ROOT / "tests" / "inspector" / "package.json").read_text())["dependencies"]
    assert (npx, package) == ("npx", f"@modelcontextprotocol/inspector@{pinned['@modelcontextprotocol/inspector']}")
    done = subprocess.run(server, input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr  # the server the Inspector would start: it starts, EOF ends it


@pytest.mark.slow
def test_the_install_hint_doctor_prints_runs_as_printed(tmp_path: Path, offline_site: Path) -> None:
    # A checkout of its own in a venv of its own (path with a space), so this environment stays as it is.
    copy = fresh_copy(tmp_path / "my checkout")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-e", str(copy)],
        capture_output=True,
        text=True,
        env=offline_env(offline_site),
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    blocker = blocked_env(tmp_path, "yaml")  # as if [notes] were not installed
    env = offline_env(offline_site, BLOCK_MODULES="yaml")
    env["PYTHONPATH"] = str(tmp_path / "blocker") + os.pathsep + env["PYTHONPATH"]
    assert blocker["BLOCK_MODULES"] == "yaml"
    config = notes_config(tmp_path)
    doctor = subprocess.run(
        [str(venv / "bin" / "mcp-tools"), "--config", str(config), "doctor"],
        capture_output=True,
        text=True,
        env=env | {"PATH": DESKTOP_PATH},
        timeout=60,
    )
    assert doctor.returncode == 0, doctor.stderr
    notes = next(line for line in doctor.stdout.splitlines() if line.strip().startswith("notes"))
    hint = notes.split("run: ", 1)[1]
    assert hint == f"{venv / 'bin' / 'python'} -m pip install -e '{copy}[notes]'"  # this checkout, this venv
    done = run_printed(hint, offline_env(offline_site))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mcp-tools-suite" in done.stdout and "mcp-tools-0" not in done.stdout


def test_the_approve_command_in_an_approval_hint_runs_as_printed(tmp_path: Path) -> None:
    (tmp_path / "data" / "files").mkdir(parents=True)
    (tmp_path / "data" / "files" / "draft.md").write_text("old\n", encoding="utf-8")
    config = write_config(
        tmp_path / "my config.toml",
        f'[server]\nservers = ["files"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n',
    )
    call = [sys.executable, "-m", "mcp_tools", "--config", str(config), "call", "files.delete", "--json"]
    result = subprocess.run(
        [*call, "--args", '{"path": "draft.md"}'], capture_output=True, text=True, env=desktop_env(tmp_path), timeout=60
    )
    error = json.loads(result.stdout)["error"]
    command = re.search(r"`([^`]+)`", error["hint"])
    assert command is not None
    words = shlex.split(command[1])
    assert words[-3:] == ["approvals", "approve", error["approval_id"]]
    assert words[1:3] == ["--config", str(config)]  # the server's config: the default lookup would miss it
    done = run_printed(command[1], desktop_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"Approved {error['approval_id']}" in done.stdout


def test_approvals_login_links_the_port_the_page_really_listens_on(tmp_path: Path) -> None:
    port = free_port()  # not the configured one
    config = write_config(
        tmp_path / "config.toml", f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n'
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_tools", "--config", str(config), "approvals", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(f"http://127.0.0.1:{port}/approvals/login?token=")
        login = run_cli(config, "approvals", "login")
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert login.returncode == 0, login.stderr
    assert login.stdout.startswith(f"http://127.0.0.1:{port}/approvals/login?token=")
    after = run_cli(config, "approvals", "login")  # the page has stopped: the configured address again
    assert after.stdout.startswith("http://127.0.0.1:8766/approvals/login?token=")


def test_the_http_banner_login_command_runs_as_printed_and_links_the_real_port(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.toml",
        f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n'
        '[http.tokens]\nme = "tok-0123456789abcdef"\n',
    )
    port = free_port()  # the configured port is 8765
    log = tmp_path / "serve.log"
    with http_server(config, log=log, port=port):
        banner = log.read_text(encoding="utf-8")
        [login] = [command for command in re.findall(r"`([^`]+)`", banner) if "approvals login" in command]
        done = run_printed(login, child_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"http://127.0.0.1:{port}/approvals/login?token=")


def printed_commands(text: str) -> list[str]:
    """The commands in backticks that start with this installation's mcp-tools."""
    executable = str(Path(sys.executable).parent / "mcp-tools")
    return [found for found in re.findall(r"`([^`]+)`", text) if shlex.split(found)[0] in (executable, "mcp-tools")]


def test_the_commands_in_doctor_tools_and_errors_run_as_printed(tmp_path: Path) -> None:
    """`config init` after a missing config or none found, `tools --all`, `tools` after an unknown
    tool name: each printed where `mcp-tools` is not on PATH, each run as printed."""
    env = desktop_env(tmp_path / "home")
    mcp_tools = [sys.executable, "-m", "mcp_tools"]
    missing = tmp_path / "my configs" / "config.toml"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*mcp_tools, *args], capture_output=True, text=True, env=env, timeout=60)

    executable = str(Path(sys.executable).parent / "mcp-tools")  # named in full: it is not on PATH here
    error = run("--config", str(missing), "doctor")
    assert error.returncode == 2
    [init] = printed_commands(error.stderr)
    assert shlex.split(init)[0] == executable
    assert run_printed(init, env).returncode == 0 and missing.exists()  # written where it was looked for
    doctor = run("doctor")  # no --config, no default file: it says how to write one
    [init_default] = [command for command in printed_commands(doctor.stdout) if "config init" in command]
    assert run_printed(init_default, env).returncode == 0
    assert (tmp_path / "home" / ".config" / "mcp-tools" / "config.toml").exists()
    tools = run("--config", str(missing), "tools")
    unknown = run("--config", str(missing), "call", "files_raed", "--json")
    [all_tools] = printed_commands(tools.stdout)
    [listing] = printed_commands(json.loads(unknown.stdout)["error"]["hint"])
    for command in (all_tools, listing):
        assert shlex.split(command)[0] == executable
        done = run_printed(command, env)
        assert done.returncode == 0, (command, done.stderr)
        assert "files_read" in done.stdout


# -- smaller things a person hits ---------------------------------------------------------------


@pytest.mark.parametrize("command", [["call", "demo.echo", "--args", '{"text": "hi"}'], ["approvals", "list"]])
def test_output_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path, command: list[str]) -> None:
    config = demo_config(tmp_path)
    for number in range(3):  # something to list
        run_cli(config, "call", "demo.erase", "--args", json.dumps({"target": f"t{number}"}))
    reader, writer = os.pipe()
    os.close(reader)  # `| head -0`: the reader is gone before the first line
    process = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "serve_demo.py"), "--config", str(config), *command],
        stdout=writer,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        timeout=60,
    )
    os.close(writer)
    assert "Traceback" not in process.stderr and "BrokenPipe" not in process.stderr, process.stderr
    assert process.returncode == 141


def test_an_unknown_argument_names_the_right_one_and_what_it_holds(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.toml",
        f'[server]\nservers = ["terminal"]\ntools = ["terminal"]\nstate_dir = "{tmp_path / "s"}"\n'
        f'data_dir = "{tmp_path / "d"}"\n[terminal]\nenabled = true\nallow = ["ls"]\nisolation = "none"\n',
    )
    result = run_cli(config, "call", "terminal.execute", "--args", '{"command": "ls -l"}', "--json")
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "invalid_arguments"
    assert "terminal.execute does not take command; did you mean argv (a list" in error["message"]
    assert "It takes argv, shell, cwd, timeout_seconds" in error["message"]


def test_a_failing_notify_hook_logs_the_command_and_its_stderr_without_secrets(tmp_path: Path) -> None:
    script = tmp_path / "notify hook.sh"
    # It closes its input unread, as many do: writing the approval to it fails, and still it is heard.
    script.write_text(
        '#!/bin/sh\nexec 0<&-\necho "cannot reach ntfy with sk-hook-secret-1234" >&2\nexit 3\n', encoding="utf-8"
    )
    script.chmod(0o755)
    config = demo_config(
        tmp_path,
        f'[approvals]\nwait_seconds = 0\n[approvals.notify]\ncommand = ["{script}", "--topic", "me"]\n',
    )
    env = child_env(MCP_TOOLS_NOTIFY_TOKEN="sk-hook-secret-1234")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "serve_demo.py"),
            "--config",
            str(config),
            "call",
            "demo.erase",
            "--args",
            '{"target": "t"}',
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "approval_required" in result.stdout
    assert f"notify command {shlex.quote(str(script))} --topic me exited with 3: cannot reach ntfy" in result.stderr
    assert "sk-hook-secret-1234" not in result.stderr


def test_doctor_says_what_a_caldav_login_lacks(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.toml",
        f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n'
        '[calendar]\nurl = "https://caldav.example.com/"\nusername = "me"\ncalendar = "Work"\n',
    )
    result = run_cli(config, "doctor")
    assert result.returncode == 1
    assert re.search(r"^  calendar\s+on ", result.stdout, re.M)
    assert "missing: the CalDAV password" in result.stdout and "MCP_TOOLS_CALDAV_PASSWORD" in result.stdout
    with_password = subprocess.run(
        [sys.executable, "-m", "mcp_tools", "--config", str(config), "doctor"],
        capture_output=True,
        text=True,
        env=child_env(MCP_TOOLS_CALDAV_PASSWORD="app-specific-pw"),
        timeout=60,
    )
    assert with_password.returncode == 0 and "missing:" not in with_password.stdout


# -- doctor on every TOML example -------------------------------------------------------------


@pytest.mark.parametrize("block", [pytest.param(b, id=b.where) for b in BLOCKS if b.lang == "toml"])
def test_doctor_diagnoses_every_toml_example_in_the_docs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "config.toml", block.text)
    for key in [key for key in os.environ if key.startswith("MCP_TOOLS_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("MCP_TOOLS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MCP_TOOLS_DATA_DIR", str(tmp_path / "data"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--config", str(config), "doctor"])
    assert code in (0, 1), f"{block.where}: doctor stopped ({code}): {err.getvalue()}"
    assert "namespaces:" in out.getvalue()
    if code == 1:  # every problem is named, and shown beside what it concerns
        summary = err.getvalue().strip().splitlines()[-1]
        assert "problem(s) to fix:" in summary, err.getvalue()
        for where in summary.split(": ", 1)[1].split(", "):
            assert re.search(rf"^(  {where}\s|{where}:)", out.getvalue(), re.M), (where, out.getvalue())
        assert re.search(r"^\s+(problem|missing):", out.getvalue(), re.M)


def test_doctor_reports_every_problem_beside_what_it_concerns(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.toml",
        f'[server]\nservers = ["files", "docs"]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n'
        '[google]\nclient_secrets = "~/client_secret.json"\n[docs]\n'
        "[approvals.telegram]\nchat_id = 1\nallowed_user_ids = [1]\n",
    )
    result = run_cli(config, "doctor")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "2 problem(s) to fix: approvals, docs" in result.stderr
    lines = result.stdout.splitlines()
    approvals = next(index for index, line in enumerate(lines) if line.startswith("approvals:"))
    assert "problem: [approvals.telegram] needs bot_token (or MCP_TOOLS_TELEGRAM_BOT_TOKEN)" in lines[approvals + 1]
    docs = next(index for index, line in enumerate(lines) if line.startswith("  docs "))
    assert "off:" in lines[docs] and "problem: it is asked for by name" in lines[docs + 1]
    assert re.search(r"^  files\s+on ", result.stdout, re.M)  # the rest is still diagnosed


# -- the budget and the published figures -------------------------------------------------------


def budget_json(tmp_path: Path, entries: list[str]) -> dict[str, Any]:
    """`mcp-tools tools --budget --json --tools ...` with no namespace configured."""
    config = write_config(
        tmp_path / "config.toml", f'[server]\nstate_dir = "{tmp_path / "s"}"\ndata_dir = "{tmp_path / "d"}"\n'
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_tools",
            "tools",
            "--budget",
            "--json",
            "--tools",
            ",".join(entries),
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def averages(items: list[dict[str, Any]]) -> tuple[int, int, int]:
    summary = budget.summarize(budget.from_json(items))[-1]
    return summary.tools, round(summary.visible_per_tool), round(summary.full_per_tool)


def test_the_budget_of_namespaces_that_are_not_configured(tmp_path: Path) -> None:
    measured = budget_json(tmp_path, ["files", "notes.core"])
    namespaces = {item["namespace"] for item in measured["tools"]}
    assert namespaces == {"files", "notes"}  # notes has no vault here, and is measured all the same
    assert {item["tier"] for item in measured["tools"] if item["namespace"] == "notes"} == {"core"}


def test_the_published_figures_are_what_the_tools_measure(tmp_path: Path) -> None:
    everything = averages(budget_json(tmp_path, list(CATALOG))["tools"])
    default = averages(budget_json(tmp_path, [f"{name}.core" for name in CATALOG])["tools"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    toolsets = (ROOT / "docs" / "toolsets.md").read_text(encoding="utf-8")
    assert f"about\n{default[1]} tokens a tool" in readme or f"about {default[1]} tokens a tool" in readme
    found = re.search(r"average tool\s+costs (\d+) tokens model-visible and (\d+) in full", readme)
    assert found and (int(found[1]), int(found[2])) == everything[1:]
    found = re.search(r"\((\d+) tools\), the average is (\d+) tokens model-visible and (\d+) in full", toolsets)
    assert found and tuple(int(part) for part in found.groups()) == everything
    before = json.loads((ROOT / "bench" / "context-007e086.json").read_text(encoding="utf-8"))
    found = re.search(r"against (\d+) and (\d+) for the (\d+) tools before toolsets", toolsets)
    tools, visible, full = averages(before["all"])
    assert found and (int(found[1]), int(found[2]), int(found[3])) == (visible, full, tools)


def test_bench_context_runs_as_the_docs_write_it(tmp_path: Path) -> None:
    block = next(b for b in BLOCKS if b.path.name == "toolsets.md" and "bench/context.py" in b.text)
    line = next(line for line in block.text.splitlines() if line.split("#")[0].strip().endswith("bench/context.py"))
    words = shlex.split(line.split("#")[0])
    assert words[0] == ".venv/bin/python"  # the project's environment, as the README's benchmarks say
    words[0] = sys.executable
    done = subprocess.run(words, capture_output=True, text=True, cwd=str(ROOT), env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(re.findall(r"^total\s+\d+\s", done.stdout, re.M)) == 2  # every namespace on, and the default


# -- installing: a fresh copy of the checkout, and the wheel -----------------------------------


def fresh_copy(target: Path) -> Path:
    """The files `git clone` would give (tracked, and new files not ignored), copied to `target`."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="session")
def offline_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This environment's installed libraries, without this project or pip itself: what pip would
    otherwise download, offered on PYTHONPATH so an install needs no index."""
    site = tmp_path_factory.mktemp("offline-site")
    ours = {DISTRIBUTION.replace("-", "_"), "mcp_tools", "pip", "setuptools", "_distutils_hack", "pkg_resources"}
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        stem = entry.name.split("-")[0]
        if stem in ours or entry.suffix == ".pth" or entry.name.startswith(("_editable_impl", "__editable__")):
            continue
        (site / entry.name).symlink_to(entry)
    return site


def offline_env(site: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MCP_TOOLS_", "PIP_"))}
    env.pop("VIRTUAL_ENV", None)
    # No index; no isolated build env (which would download hatchling): pip's "0" turns isolation off.
    env.update(PYTHONPATH=str(site), PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_FIND_LINKS="", **extra)
    return env


def readme_blocks() -> list[Block]:
    return [block for block in BLOCKS if block.path.name == "README.md" and block.lang == "bash"]


@pytest.mark.slow
async def test_a_fresh_copy_walks_the_readme_top_to_bottom(tmp_path: Path, offline_site: Path) -> None:
    copy = fresh_copy(tmp_path / "my projects" / "mcp-tools")
    first, second = readme_blocks()[:2]
    # The README opens with the two commands: serve on the embedded defaults, and the whole suite (CI's).
    assert first.text.strip().endswith(".venv/bin/mcp-tools serve")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert second.text.strip() == ci
    home = tmp_path / "home"
    home.mkdir()
    env = offline_env(offline_site, HOME=str(home))
    started = subprocess.run(
        ["bash", "-c", first.text.strip()], input="", capture_output=True, text=True, cwd=copy, env=env, timeout=900
    )
    assert started.returncode == 0, started.stderr[-3000:]
    mcp_tools = copy / ".venv" / "bin" / "mcp-tools"
    assert mcp_tools.exists()

    # The Claude Desktop entry, from the README's command, spawned as the desktop client does.
    printed = subprocess.run(
        [*shlex.split(readme_line("install claude-desktop ")), "--claude-config", str(home / "claude.json")],
        capture_output=True,
        text=True,
        cwd=copy,
        env=env,
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["mcp-tools"]
    assert entry["command"] == str(copy / ".venv" / "bin" / "python")
    desktop = desktop_env(home) | {"PYTHONPATH": str(offline_site)}  # the libraries pip would have downloaded
    names = await tool_names(entry["command"], entry["args"], desktop, "/")
    assert {"files_read", "inbox_search"} <= names

    # doctor, on the embedded defaults and on a config from the docs.
    doctor = subprocess.run([str(mcp_tools), "doctor"], capture_output=True, text=True, env=env, timeout=60)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert re.search(r"^  files\s+on ", doctor.stdout, re.M)
    toml = next(block for block in BLOCKS if block.lang == "toml" and "[policy]" in block.text)
    tomllib.loads(toml.text)
    config = write_config(tmp_path / "policy example.toml", toml.text)
    doctor = subprocess.run(
        [str(mcp_tools), "doctor", "--config", str(config)], capture_output=True, text=True, env=env, timeout=60
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "hidden" in doctor.stdout or "not served" in doctor.stdout or "policy:" in doctor.stdout


def readme_line(containing: str) -> str:
    """The README command line that holds `containing` (its comment cut off)."""
    for block in readme_blocks():
        for line in block.text.splitlines():
            if containing in line:
                return line.split("  #")[0].strip()
    raise AssertionError(f"no README command holds {containing!r}")


@pytest.mark.slow
async def test_a_built_wheel_installs_in_a_fresh_venv_and_serves(tmp_path: Path, offline_site: Path) -> None:
    copy = fresh_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(copy)],
        capture_output=True,
        text=True,
        env=offline_env(offline_site),
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = dist.glob("*.whl")
    assert wheel.name.startswith(f"{DISTRIBUTION.replace('-', '_')}-")
    venv = tmp_path / "fresh venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = offline_env(offline_site, HOME=str(tmp_path / "home"))
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import mcp_tools, mcp_tools.util.commands as c; print(mcp_tools.__file__);"
            " print(c.source_checkout()); print(c.pip_install('notes'))",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=60,
    )
    module, checkout, hint = where.stdout.splitlines()
    assert module.startswith(str(venv)) and checkout == "None"
    # Not the project's name, which no index holds yet: the wheel it was installed from, run as printed.
    assert hint == f"{shlex.quote(str(venv / 'bin' / 'python'))} -m pip install {shlex.quote(f'{wheel}[notes]')}"
    done = run_printed(hint, env)
    assert done.returncode == 0, done.stderr[-3000:]
    names = await tool_names(str(venv / "bin" / "mcp-tools"), ["serve"], env, str(tmp_path))
    assert {"files_read", "inbox_search"} <= names
