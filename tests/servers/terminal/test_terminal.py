"""terminal_execute over the real MCP client: allowlist, deny list, timeouts, output caps, environment
and, with bubblewrap, a sandbox that keeps writes in the working folder and the network out."""

from __future__ import annotations

import os
import select
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import App, build_app
from mcp_tools.servers.terminal.isolation import probe
from tests.harness import connect, failure, make_config, ok, text_of
from tests.system_packages import apt_install

SECRETS = {
    "MCP_TOOLS_HTTP_TOKEN": "token-abcdef-123456",
    "TAVILY_API_KEY": "tvly-secret-987654",
    "GITHUB_TOKEN": "ghp-secret-555555",
    "NOT_LISTED": "plain-but-unlisted",
}
ENVIRON = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PROJECT": "visible-value", **SECRETS}


@pytest.fixture(scope="session")
def bwrap() -> str:
    """A working bubblewrap: installed here when missing and possible, else the test is skipped with why."""
    missing = apt_install("bubblewrap", "bwrap")
    path = shutil.which("bwrap")
    if missing is not None or path is None:
        pytest.skip(f"bubblewrap is not installed and could not be installed: {missing}")
    reason = probe(path)
    if reason is not None:
        pytest.skip(f"bubblewrap cannot create a sandbox here (user namespaces unavailable?): {reason}")
    return path


def settings(tmp_path: Path, **terminal: Any) -> dict[str, Any]:
    values = {"enabled": True, "allow": ["sh", "ls", "env", "seq", "python3", "sudo"], "env": ["PATH", "PROJECT"]}
    values.update(terminal)
    return {"server": {"servers": ["terminal"]}, "terminal": values}


def make_app(tmp_path: Path, **terminal: Any) -> App:
    app = build_app(make_config(tmp_path, settings(tmp_path, **terminal), environ=ENVIRON))
    (tmp_path / "data" / "files" / "work").mkdir(parents=True, exist_ok=True)
    return app


def unisolated(tmp_path: Path, **terminal: Any) -> App:
    return make_app(tmp_path, isolation="none", **terminal)


@pytest.mark.anyio
async def test_off_by_default_and_listed_with_its_reason(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {}))
    (status,) = [s for s in app.statuses if s.name == "terminal"]
    assert not status.enabled and "off by default" in (status.reason or "")
    assert "terminal_execute" not in {tool.wire_name for tool in app.tools.values()}


@pytest.mark.anyio
async def test_a_command_runs_after_the_person_saw_argv_folder_and_isolation(tmp_path: Path) -> None:
    app = unisolated(tmp_path)
    (tmp_path / "data" / "files" / "work" / "a.txt").write_text("x")
    seen: list[Any] = []
    async with connect(tmp_path, app=app, seen=seen) as client:
        result = await client.call_tool("terminal_execute", {"argv": ["ls", "-1", "a b"], "cwd": "work"})
    data = ok(result)
    assert data["exit_code"] == 2 and "a b" in data["stderr"]  # ls ran in work/ and reported the missing name
    message = seen[0].message
    assert "Run `ls -1 'a b'` in work (no isolation" in message
    assert data["isolation"].startswith("no isolation")


@pytest.mark.anyio
async def test_nothing_runs_without_a_yes(tmp_path: Path) -> None:
    app = unisolated(tmp_path)
    marker = tmp_path / "data" / "files" / "work" / "ran"
    command = {"argv": ["sh", "-c", "touch ran"], "cwd": "work"}
    async with connect(tmp_path, app=app, elicit="decline") as client:
        declined = failure(await client.call_tool("terminal_execute", command))
    async with connect(tmp_path, app=app, elicit=None) as client:
        pending = failure(await client.call_tool("terminal_execute", command))
    assert declined["kind"] == "declined_by_user" and pending["kind"] == "approval_required"
    assert not marker.exists()


@pytest.mark.anyio
async def test_a_policy_rule_cannot_make_it_routine(tmp_path: Path) -> None:
    config = settings(tmp_path, isolation="none")
    config["policy"] = {"rules": [{"match": "terminal.*", "risk": "low"}]}
    app = build_app(make_config(tmp_path, config, environ=ENVIRON))
    async with connect(tmp_path, app=app, elicit=None) as client:
        pending = failure(await client.call_tool("terminal_execute", {"argv": ["ls"]}))
    assert pending["kind"] == "approval_required"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("argv", "kind", "needle"),
    [
        (["rm", "-rf", "/"], "denied_by_policy", "not an allowed program"),
        (["/bin/rm", "x"], "denied_by_policy", "not an allowed program"),
        (["sudo", "ls"], "denied_by_policy", "deny list"),  # allowed, but the deny list wins
        (["./sh"], "invalid_arguments", "relative path"),
        (["no-such-program-xyz"], "not_found", "not found"),
    ],
)
async def test_allowlist_and_deny_list_refuse_before_asking(
    tmp_path: Path, argv: list[str], kind: str, needle: str
) -> None:
    app = unisolated(tmp_path)
    seen: list[Any] = []
    async with connect(tmp_path, app=app, seen=seen) as client:
        error = failure(await client.call_tool("terminal_execute", {"argv": argv}))
    assert error["kind"] == kind and needle in error["message"]
    assert seen == []


@pytest.mark.anyio
async def test_a_program_denied_by_its_real_name_stays_denied_behind_a_symlink(tmp_path: Path) -> None:
    link = tmp_path / "bin" / "harmless"
    link.parent.mkdir()
    link.symlink_to(shutil.which("env") or "/usr/bin/env")
    app = unisolated(tmp_path, allow=[str(link)], deny=["env"])
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("terminal_execute", {"argv": [str(link)]}))
    assert error["kind"] == "denied_by_policy"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "kind", "needle"),
    [
        ({"argv": ["ls"], "cwd": "../"}, "invalid_arguments", "'..'"),
        ({"argv": ["ls"], "cwd": "missing"}, "not_found", "not a folder"),
        ({"shell": "ls | wc -l"}, "denied_by_policy", "shell command lines are off"),
        ({"argv": ["ls"], "shell": "ls"}, "invalid_arguments", "not both"),
        ({"argv": ["ls"], "timeout_seconds": 100_000}, "invalid_arguments", "timeout_seconds"),
    ],
)
async def test_bad_folders_and_forms_are_refused(
    tmp_path: Path, arguments: dict[str, Any], kind: str, needle: str
) -> None:
    app = unisolated(tmp_path)
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("terminal_execute", arguments))
    assert error["kind"] == kind and needle in error["message"]


@pytest.mark.anyio
async def test_a_symlinked_folder_out_of_the_root_is_refused(tmp_path: Path) -> None:
    app = unisolated(tmp_path)
    (tmp_path / "data" / "files" / "escape").symlink_to(tmp_path)
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("terminal_execute", {"argv": ["ls"], "cwd": "escape"}))
    assert error["kind"] == "invalid_arguments" and "outside the root" in error["message"]


@pytest.mark.anyio
async def test_a_shell_runs_when_the_config_allows_it(tmp_path: Path) -> None:
    app = unisolated(tmp_path, shell=True)
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("terminal_execute", {"shell": "echo one; echo two | tr a-z A-Z"}))
    assert data["stdout"] == "one\nTWO\n" and data["exit_code"] == 0


def watch_writers(fifo: Path) -> int:
    """The read end of a new FIFO, open before any writer: a process that opens it for writing
    holds it until it dies (see `wait_until_writers_are_gone`)."""
    os.mkfifo(fifo)
    return os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)


def wait_until_writers_are_gone(reader: int, timeout: float = 10) -> None:
    """Return once every process that opened the FIFO for writing has closed it (it hangs up),
    or after `timeout` when none ever did; closes the read end."""
    poller = select.poll()
    poller.register(reader, select.POLLHUP)
    try:
        poller.poll(timeout * 1000)
    finally:
        os.close(reader)


async def _timeout_kills_children(tmp_path: Path, app: Any) -> None:
    work = tmp_path / "data" / "files" / "work"
    reader = watch_writers(work / "held")
    # the grandchild inherits the FIFO and holds it while it lives; left alive, it would write its file at 1.5 s
    # and then hang up
    script = "exec 3>held; (sleep 1.5; echo alive > grandchild.txt) & exec 3>&-; sleep 30"
    started = time.monotonic()
    async with connect(tmp_path, app=app) as client:
        command = {"argv": ["sh", "-c", script], "cwd": "work", "timeout_seconds": 0.5}
        data = ok(await client.call_tool("terminal_execute", command))
    assert time.monotonic() - started < 10
    assert data["timed_out"] is True and data["exit_code"] is None
    wait_until_writers_are_gone(reader)
    assert not (work / "grandchild.txt").exists()  # the background child died with the group


@pytest.mark.anyio
async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    await _timeout_kills_children(tmp_path, unisolated(tmp_path))


@pytest.mark.anyio
async def test_children_left_behind_after_a_normal_exit_are_killed(tmp_path: Path) -> None:
    app = unisolated(tmp_path)
    work = tmp_path / "data" / "files" / "work"
    reader = watch_writers(work / "held")
    script = "exec 3>held; (sleep 1; echo late > late.txt) >/dev/null 2>&1 & exec 3>&-; echo started"
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("terminal_execute", {"argv": ["sh", "-c", script], "cwd": "work"}))
    assert data["exit_code"] == 0 and data["stdout"] == "started\n"
    wait_until_writers_are_gone(reader)
    assert not (work / "late.txt").exists()


@pytest.mark.anyio
async def test_output_is_capped_and_the_kept_part_can_be_paged(tmp_path: Path) -> None:
    app = unisolated(tmp_path, max_output_bytes=10_000, output_chars=1_000)
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("terminal_execute", {"argv": ["seq", "1", "100000"]}))
    assert data["stdout_bytes"] == len("\n".join(str(n) for n in range(1, 100_001))) + 1
    assert data["truncated"] is True and len(data["stdout"]) < 1_100
    assert data["stdout"].startswith("1\n2\n") and "characters omitted" in data["stdout"]
    kept = (tmp_path / "data" / "files" / data["output_path"]).read_bytes()
    assert kept.startswith(b"=== stdout ===\n1\n2\n") and len(kept) < 10_100
    assert data["output_path"].startswith(".terminal/")


@pytest.mark.anyio
async def test_secrets_and_unlisted_variables_never_reach_the_command(tmp_path: Path) -> None:
    app = unisolated(tmp_path)
    async with connect(tmp_path, app=app) as client:
        result = await client.call_tool("terminal_execute", {"argv": ["env"]})
    data = ok(result)
    assert "PROJECT=visible-value" in data["stdout"]
    for name, value in SECRETS.items():
        assert name not in data["stdout"] and value not in text_of(result)


def test_listing_a_secret_variable_is_a_config_error(tmp_path: Path) -> None:
    from mcp_tools.core.config import ConfigError

    with pytest.raises(ConfigError, match="GITHUB_TOKEN looks like a secret"):
        build_app(make_config(tmp_path, settings(tmp_path, env=["PATH", "GITHUB_TOKEN"]), environ=ENVIRON))


def test_without_bubblewrap_it_refuses_to_start_unless_unisolated_is_accepted(tmp_path: Path) -> None:
    from mcp_tools.core.config import ConfigError

    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    app = build_app(make_config(tmp_path, {"terminal": settings(tmp_path, bwrap_path=str(fake))["terminal"]}, ENVIRON))
    (status,) = [s for s in app.statuses if s.name == "terminal"]
    assert not status.enabled
    assert "No permissions to create new namespace" in (status.reason or "")
    assert 'isolation = "none"' in (status.reason or "")
    with pytest.raises(ConfigError, match="bubblewrap"):  # asked for by name: it must start, or say why not
        build_app(make_config(tmp_path, settings(tmp_path, bwrap_path=str(tmp_path / "nope")), environ=ENVIRON))


def test_doctor_says_which_isolation_is_active(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_tools.cli import main

    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nstate_dir = "{tmp_path}/state"\ndata_dir = "{tmp_path}/data"\n'
        '[terminal]\nenabled = true\nallow = ["ls", "no-such-tool"]\nisolation = "none"\n'
    )
    assert main(["--config", str(config), "doctor"]) == 0
    out = capsys.readouterr().out
    assert "isolation: no isolation" in out
    assert "allowed: ls, no-such-tool (not found: no-such-tool)" in out


# --- with bubblewrap --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_bubblewrap_keeps_writes_in_the_working_folder(tmp_path: Path, bwrap: str, outside_tmp: Path) -> None:
    app = make_app(tmp_path)
    root = tmp_path / "data" / "files"
    outside = outside_tmp / "outside.txt"
    script = f"echo in > inside.txt; echo out > ../escaped.txt; echo out > {outside}; echo out > /etc/mcp-test"
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("terminal_execute", {"argv": ["sh", "-c", script], "cwd": "work"}))
    assert data["isolation"].startswith("bubblewrap")
    assert (root / "work" / "inside.txt").read_text() == "in\n"
    assert not (root / "escaped.txt").exists() and not outside.exists() and not Path("/etc/mcp-test").exists()
    assert "Read-only file system" in data["stderr"] or "No such file" in data["stderr"]


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp, which the sandbox replaces wholesale, so hiding is really tested."""
    folder = Path(tempfile.mkdtemp(prefix="mcp-tools-test-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.anyio
async def test_bubblewrap_hides_our_state_and_the_other_namespaces_data(
    tmp_path: Path, bwrap: str, outside_tmp: Path
) -> None:
    config = settings(tmp_path, allow=["ls", "cat"])
    config["server"].update(state_dir=str(outside_tmp / "state"), data_dir=str(outside_tmp / "data"))
    config["terminal"]["root"] = str(outside_tmp / "data" / "files")
    app = build_app(make_config(tmp_path, config, environ=ENVIRON))
    (outside_tmp / "data" / "files").mkdir(parents=True, exist_ok=True)
    (outside_tmp / "data" / "inbox").mkdir(parents=True, exist_ok=True)
    (outside_tmp / "data" / "inbox" / "mail.eml").write_text("private mail")
    (outside_tmp / "data" / "files" / "mine.txt").write_text("readable")
    assert (outside_tmp / "state" / "policy.sqlite3").exists()
    async with connect(tmp_path, app=app) as client:
        state = ok(await client.call_tool("terminal_execute", {"argv": ["ls", "-A", str(outside_tmp / "state")]}))
        mail = ok(await client.call_tool("terminal_execute", {"argv": ["ls", "-A", str(outside_tmp / "data")]}))
        own = ok(await client.call_tool("terminal_execute", {"argv": ["cat", "mine.txt"]}))
    assert state["stdout"] == ""  # an empty folder stands in for approvals, audit and tokens
    assert mail["stdout"] == "files\n"  # the store is there; the inbox's mail is not
    assert own["stdout"] == "readable"


@pytest.mark.anyio
@pytest.mark.parametrize("network", [False, True])
async def test_bubblewrap_cuts_the_network_unless_allowed(tmp_path: Path, bwrap: str, network: bool) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    port = listener.getsockname()[1]
    app = make_app(tmp_path, network=network)
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')"
    try:
        async with connect(tmp_path, app=app) as client:
            data = ok(await client.call_tool("terminal_execute", {"argv": ["python3", "-c", code]}))
    finally:
        listener.close()
    if network:
        assert data["exit_code"] == 0 and "connected" in data["stdout"]
    else:
        assert data["exit_code"] != 0 and "connected" not in data["stdout"]
        assert "Connection refused" in data["stderr"] or "unreachable" in data["stderr"]


@pytest.mark.anyio
async def test_bubblewrap_timeout_kills_everything_inside(tmp_path: Path, bwrap: str) -> None:
    await _timeout_kills_children(tmp_path, make_app(tmp_path))


def test_doctor_reports_bubblewrap(tmp_path: Path, bwrap: str) -> None:
    app = make_app(tmp_path)
    (status,) = [s for s in app.statuses if s.name == "terminal"]
    (line,) = app.status_lines("terminal")
    assert status.enabled and "bubblewrap: system read-only" in line
    assert line.count("no network") == 1


@pytest.mark.anyio
async def test_bubblewrap_hides_listed_paths_even_behind_symlinks(
    tmp_path: Path, bwrap: str, outside_tmp: Path
) -> None:
    secret_dir = outside_tmp / "keys"
    secret_dir.mkdir()
    (secret_dir / "id").write_text("private")
    (outside_tmp / "keys-link").symlink_to(secret_dir)
    secret_file = outside_tmp / "token.txt"
    secret_file.write_text("private")
    app = make_app(tmp_path, allow=["cat", "ls"])
    async with connect(tmp_path, app=app) as client:  # control: without `hide` both are visible
        shown = ok(await client.call_tool("terminal_execute", {"argv": ["cat", str(secret_file)]}))
    assert shown["stdout"] == "private"
    app = make_app(tmp_path, hide=[str(outside_tmp / "keys-link"), str(secret_file)], allow=["cat", "ls"])
    async with connect(tmp_path, app=app) as client:
        ok_listing = ok(await client.call_tool("terminal_execute", {"argv": ["ls", "-A", str(secret_dir)]}))
        read = ok(await client.call_tool("terminal_execute", {"argv": ["cat", str(secret_file)]}))
    assert ok_listing["stdout"] == "" and read["stdout"] == ""


@pytest.mark.anyio
async def test_over_stdio_a_command_reading_stdin_gets_nothing_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """On stdio the server's stdin is the MCP stream: a command must never read from it."""
    from mcp import Client

    from tests.harness import elicitation_handler
    from tests.processes import demo_config, stdio_params

    config = demo_config(
        tmp_path, '[terminal]\nenabled = true\nallow = ["cat"]\nisolation = "none"\n', servers='["terminal"]'
    )
    (tmp_path / "data" / "files").mkdir(parents=True)
    async with Client(stdio_params(config), elicitation_callback=elicitation_handler("accept")) as client:
        first = ok(await client.call_tool("terminal_execute", {"argv": ["cat"], "timeout_seconds": 5}))
        second = ok(await client.call_tool("terminal_execute", {"argv": ["cat"], "timeout_seconds": 5}))
    assert first["stdout"] == "" and first["exit_code"] == 0 and not first["timed_out"]
    assert second["exit_code"] == 0  # the server still serves: nothing of its stream was eaten


# --- attacks: the sandbox must not lead back to the server -----------------------------------------


@pytest.mark.parametrize("held", ["home", "state", "data", "config folder", "client config"])
def test_a_root_that_holds_our_state_or_a_secret_folder_is_refused_at_start(
    tmp_path: Path, outside_tmp: Path, held: str
) -> None:
    """With the root at the home folder, a command read ~/.ssh and wrote the policy database."""
    from mcp_tools.core.config import ConfigError, load_config

    home = outside_tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".config" / "Claude").mkdir(parents=True)
    roots = {
        "home": home,
        "state": outside_tmp / "state" / "..",
        "data": outside_tmp / "data",
        "config folder": outside_tmp / "conf",
        "client config": home / ".config",
    }
    (outside_tmp / "conf").mkdir()
    config_file = outside_tmp / "conf" / "config.toml"
    config_file.write_text(
        f'[server]\nservers = ["terminal"]\nstate_dir = "{outside_tmp}/state"\ndata_dir = "{outside_tmp}/data"\n'
        f'[terminal]\nenabled = true\nallow = ["ls"]\nisolation = "none"\nroot = "{roots[held]}"\n'
    )
    config = load_config(config_file, {**ENVIRON, "HOME": str(home)})
    with pytest.raises(ConfigError, match="commands must never reach"):
        build_app(config)


def _run(argv: list[str], cwd: str = "") -> dict[str, Any]:
    return {"argv": argv, "cwd": cwd}


@pytest.mark.anyio
async def test_bubblewrap_binds_never_show_a_hidden_path_again(tmp_path: Path, bwrap: str, outside_tmp: Path) -> None:
    """Hidden paths inside the root were mounted before the root's bind, which showed them again."""
    root = outside_tmp / "work"
    (root / "private").mkdir(parents=True)
    (root / "private" / "secret.txt").write_text("hidden-folder-content")
    (root / "key.pem").write_text("hidden-file-content")
    (root / "project").mkdir()
    app = make_app(tmp_path, root=str(root), allow=["cat", "ls"], hide=[str(root / "private"), str(root / "key.pem")])
    async with connect(tmp_path, app=app) as client:
        listing = ok(await client.call_tool("terminal_execute", _run(["ls", "-A", "private"])))
        folder = ok(await client.call_tool("terminal_execute", _run(["cat", "private/secret.txt"])))
        file = ok(await client.call_tool("terminal_execute", _run(["cat", "../key.pem"], "project")))
        inside = failure(await client.call_tool("terminal_execute", _run(["ls"], "private")))
    assert listing["stdout"] == "" and folder["exit_code"] != 0
    assert "hidden-folder-content" not in folder["stdout"] and file["stdout"] == ""
    assert inside["kind"] == "denied_by_policy" and "hidden" in inside["message"]


@pytest.mark.anyio
async def test_bubblewrap_hides_the_config_the_files_it_names_and_the_client_config(
    tmp_path: Path, bwrap: str, outside_tmp: Path
) -> None:
    """The config, Claude Desktop's config (with the bot token) and a service-account key were read
    and sent back base64-encoded, past the scrubber."""
    from mcp_tools.core.config import load_config

    home = outside_tmp / "home"
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text('{"env": {"MCP_TOOLS_TELEGRAM_BOT_TOKEN": "desktop-config-content"}}')
    keys = outside_tmp / "keys"
    keys.mkdir()
    (keys / "service-account.json").write_text("service-account-content")
    (keys / "client.json").write_text("client-secrets-content")
    root = outside_tmp / "work"
    root.mkdir()
    (root / "token.json").write_text("token-file-content")  # a file the config names, inside the root
    conf = outside_tmp / "conf"
    conf.mkdir()
    (conf / "notes.txt").write_text("config-folder-content")
    config_file = conf / "config.toml"
    config_file.write_text(
        f'# config-file-content\n[server]\nservers = ["terminal"]\ntools = ["*"]\n'
        f'state_dir = "{outside_tmp}/state"\ndata_dir = "{outside_tmp}/data"\n'
        f'[google]\nservice_account_file = "{keys}/service-account.json"\nclient_secrets = "{keys}/client.json"\n'
        f'token_file = "{root}/token.json"\n'
        f'[terminal]\nenabled = true\nallow = ["sh"]\nroot = "{root}"\nenv = ["PATH", "HOME"]\n'
    )
    app = build_app(load_config(config_file, {**ENVIRON, "HOME": str(home)}))
    targets = [config_file, conf / "notes.txt", claude, keys / "service-account.json", keys / "client.json"]
    script = "; ".join(f"base64 {path} 2>/dev/null; cat {path} 2>/dev/null" for path in targets)
    script += "; base64 token.json; cat token.json"
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("terminal_execute", _run(["sh", "-c", script])))
    import base64

    assert data["isolation"].startswith("bubblewrap")
    markers = ("config-file", "config-folder", "desktop-config", "service-account", "client-secrets", "token-file")
    for marker in (f"{name}-content" for name in markers):
        assert marker not in data["stdout"]
        assert base64.b64encode(marker.encode()).decode()[:12] not in data["stdout"]


@pytest.mark.anyio
@pytest.mark.parametrize("network", [False, True])
async def test_bubblewrap_reaches_no_unix_socket_under_run_or_the_runtime_dir(
    tmp_path: Path, bwrap: str, outside_tmp: Path, network: bool
) -> None:
    """ "No network" still reached a Unix socket under /run: on a desktop, D-Bus and the agents."""
    if not os.access("/run", os.W_OK):
        pytest.skip("needs a writable /run to put a listener there")
    runtime = outside_tmp / "runtime"
    runtime.mkdir()
    paths = [Path(f"/run/mcp-tools-test-{os.getpid()}-{network}.sock"), runtime / "bus"]
    listeners = []
    for path in paths:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(8)
        listeners.append(listener)
    code = (
        "import socket, sys\n"
        "for path in sys.argv[1:]:\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n"
        "        s.connect(path); print('connected', path)\n"
        "    except OSError as error:\n"
        "        print('refused', path, type(error).__name__)\n"
    )
    config = settings(tmp_path, network=network)
    app = build_app(make_config(tmp_path, config, environ={**ENVIRON, "XDG_RUNTIME_DIR": str(runtime)}))
    (tmp_path / "data" / "files").mkdir(parents=True, exist_ok=True)
    try:
        async with connect(tmp_path, app=app) as client:
            data = ok(await client.call_tool("terminal_execute", _run(["python3", "-c", code, *map(str, paths)])))
    finally:
        for listener in listeners:
            listener.close()
        paths[0].unlink(missing_ok=True)
    assert data["exit_code"] == 0, data["stderr"]
    assert "connected" not in data["stdout"] and data["stdout"].count("refused") == 2


@pytest.mark.anyio
async def test_bubblewrap_programs_the_config_names_by_path_still_run(tmp_path: Path, bwrap: str) -> None:
    """Files the config names are hidden when they hold data; an allowed program is not data."""
    ls = os.path.realpath(shutil.which("ls") or "/bin/ls")
    app = make_app(tmp_path, allow=[ls], bwrap_path=bwrap)
    (tmp_path / "data" / "files" / "seen.txt").write_text("x")
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("terminal_execute", _run([ls])))
    assert data["isolation"].startswith("bubblewrap") and "seen.txt" in data["stdout"]


@pytest.mark.anyio
async def test_bubblewrap_a_config_kept_in_the_home_folder_hides_the_file_not_the_home(
    tmp_path: Path, bwrap: str, outside_tmp: Path
) -> None:
    from mcp_tools.core.config import load_config

    home = outside_tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\nname = visible\n")
    root = outside_tmp / "work"
    root.mkdir()
    config_file = home / "mcp-tools.toml"
    config_file.write_text(
        f'# config-file-content\n[server]\nservers = ["terminal"]\ntools = ["*"]\n'
        f'state_dir = "{outside_tmp}/state"\ndata_dir = "{outside_tmp}/data"\n'
        f'[terminal]\nenabled = true\nallow = ["cat"]\nroot = "{root}"\n'
    )
    app = build_app(load_config(config_file, {**ENVIRON, "HOME": str(home)}))
    async with connect(tmp_path, app=app) as client:
        gitconfig = ok(await client.call_tool("terminal_execute", _run(["cat", str(home / ".gitconfig")])))
        config = ok(await client.call_tool("terminal_execute", _run(["cat", str(config_file)])))
    assert "name = visible" in gitconfig["stdout"] and config["stdout"] == ""
