"""The `mcp-tools` command as a person uses it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, answer_on_terminal, child_env, demo_config, run_cli


def test_tools_lists_canonical_and_wire_names_with_risk(tmp_path: Path) -> None:
    result = run_cli(demo_config(tmp_path), "tools", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["demo.erase"]["wire_name"] == "demo_erase" and rows["demo.erase"]["risk"] == "high"
    assert rows["demo.note"]["escalates"] is True
    assert rows["demo.echo"]["annotations"]["readOnlyHint"] is True


def test_call_runs_through_the_policy(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    low = run_cli(config, "call", "demo.echo", "--args", '{"text": "hi"}', "--json")
    assert low.returncode == 0 and json.loads(low.stdout) == {"echo": "hello: hi"}
    medium = run_cli(config, "call", "demo_note", "--args", '{"key": "k", "text": "v"}')
    assert medium.returncode == 0 and "Done: Store note 'k' (demo.note, medium risk)." in medium.stderr
    assert "Tell the user" not in medium.stderr + medium.stdout  # words for a model, not for the person here
    # Not a terminal: like a client that cannot ask.
    high = run_cli(config, "call", "demo.erase", "--args", '{"target": "t"}', "--json")
    assert high.returncode == 1
    error = json.loads(high.stdout)["error"]
    assert error["kind"] == "approval_required"
    approved = run_cli(config, "approvals", "approve", error["approval_id"])
    assert approved.returncode == 0 and "the same call with the same arguments may run once" in approved.stdout
    assert "while what it acts on is as described (if that changes, you are asked again)" in approved.stdout
    again = run_cli(config, "call", "demo.erase", "--args", '{"target": "t"}', "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == {"erased": "t"}
    bad = run_cli(config, "call", "demo.echo", "--args", "{not json")
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    audit = [json.loads(line) for line in run_cli(config, "audit", "--json").stdout.splitlines()]
    assert [row["transport"] for row in audit] == ["cli"] * 4


def test_call_on_a_terminal_asks_y_or_n(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    for answer, expected in ((b"n\n", "declined_by_user"), (b"y\n", "erased: t")):
        prompt, out, _ = answer_on_terminal(config, "call", "demo.erase", "--args", '{"target": "t"}', answer=answer)
        assert b"Erase 't'" in prompt
        assert expected in out


def test_approvals_show_and_unknown_ids(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    error = json.loads(run_cli(config, "call", "demo.erase", "--args", '{"target": "t"}', "--json").stdout)["error"]
    shown = json.loads(run_cli(config, "approvals", "show", error["approval_id"]).stdout)
    assert shown["tool"] == "demo.erase" and shown["summary"] == "Erase 't'" and shown["status"] == "pending"
    assert "apr-" in run_cli(config, "approvals", "list").stdout
    missing = run_cli(config, "approvals", "approve", "apr-doesnotexist")
    assert missing.returncode == 1 and "no approval" in missing.stderr


def test_doctor_reports_each_namespace(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo", "files", "calendar"]', extra='[calendar]\nusername = "me"\n')
    result = run_cli(config, "doctor")  # diagnoses instead of stopping, and says it found a problem
    assert result.returncode == 1 and "problem(s) to fix: calendar" in result.stderr
    calendar = result.stdout[result.stdout.index("  calendar") :].splitlines()
    assert calendar[0].startswith("  calendar  off: set [calendar] url") and "problem: it is asked for" in calendar[1]
    assert "demo      on  (4 tools)" in result.stdout
    config = demo_config(tmp_path)
    result = run_cli(config, "doctor")
    assert result.returncode == 0, result.stderr
    assert "demo      on  (4 tools)" in result.stdout
    assert "not selected" in result.stdout and str(tmp_path / "state") in result.stdout


def test_doctor_says_a_server_that_serves_no_tool_is_a_problem(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers="[]")
    result = run_cli(config, "doctor")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tools:     0 served" in result.stdout and "no tool is served" in result.stdout
    assert "problem(s) to fix: tools" in result.stderr


def test_config_init_writes_a_valid_commented_config(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "config.toml"
    result = run_cli(path, "config", "init")
    assert result.returncode == 0 and path.exists()
    assert run_cli(path, "config", "init").returncode == 1  # will not overwrite
    env = {"MCP_TOOLS_STATE_DIR": str(tmp_path / "s"), "MCP_TOOLS_DATA_DIR": str(tmp_path / "d")}
    doctor = subprocess.run(
        [sys.executable, "-m", "mcp_tools", "--config", str(path), "doctor"],
        capture_output=True,
        text=True,
        env=child_env(**env),
        cwd=str(ROOT),
        timeout=60,
    )
    assert doctor.returncode == 0, doctor.stderr
    assert "files     on" in doctor.stdout


@pytest.mark.parametrize("command", [["config", "init", "--force"], ["install", "claude-desktop", "--write"]])
def test_writing_where_nothing_can_be_written_is_an_error_not_a_traceback(tmp_path: Path, command: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    target = blocker / "below" / "x.json"
    if command[0] == "config":
        result = subprocess.run(
            [sys.executable, "-m", "mcp_tools", "--config", str(target), *command],
            capture_output=True,
            text=True,
            env=child_env(),
            cwd=str(ROOT),
        )
    else:
        result = run_cli(demo_config(tmp_path), *command, "--claude-config", str(target))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1 and f"cannot write {target}" in result.stderr


@pytest.mark.parametrize("command", [["serve", "--http"], ["approvals", "serve"]])
@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_refused_by_the_parser(tmp_path: Path, command: list[str], port: str) -> None:
    result = run_cli(demo_config(tmp_path), *command, "--port", port)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2 and "is not a port number" in result.stderr
    assert "serving" not in result.stderr and "login?token=" not in result.stdout


@pytest.mark.parametrize("command", [["serve"], ["serve", "--http"], ["tools"]])
def test_an_unknown_namespace_in_servers_stops_with_the_closest_name(tmp_path: Path, command: list[str]) -> None:
    result = run_cli(demo_config(tmp_path), *command, "--servers", "demo,filez")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2 and "unknown namespace 'filez'; did you mean 'files'?" in result.stderr


def test_install_claude_desktop_prints_and_merges(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    printed = json.loads(run_cli(config, "install", "claude-desktop").stdout)
    entry = printed["mcpServers"]["mcp-tools"]
    assert entry["args"] == ["-m", "mcp_tools", "--config", str(config), "serve"]
    claude = tmp_path / "claude.json"
    claude.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    result = run_cli(config, "install", "claude-desktop", "--write", "--claude-config", str(claude))
    assert result.returncode == 0
    merged = json.loads(claude.read_text())
    assert merged["theme"] == "dark" and set(merged["mcpServers"]) == {"other", "mcp-tools"}
    claude.write_text("{broken")
    assert run_cli(config, "install", "claude-desktop", "--write", "--claude-config", str(claude)).returncode == 1
    assert claude.read_text() == "{broken"


@pytest.mark.parametrize("existing", ["[1, 2]", '{"mcpServers": []}', '{"mcpServers": "x"}', '"text"'])
def test_install_leaves_a_claude_config_of_another_shape_alone_and_says_why(tmp_path: Path, existing: str) -> None:
    config = demo_config(tmp_path)
    claude = tmp_path / "claude.json"
    claude.write_text(existing)
    result = run_cli(config, "install", "claude-desktop", "--write", "--claude-config", str(claude))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1 and "not touching it" in result.stderr
    assert claude.read_text() == existing


def test_install_reads_a_claude_config_saved_with_a_byte_order_mark(tmp_path: Path) -> None:
    """Windows editors often save JSON with a BOM; Claude Desktop reads it, so do we."""
    config = demo_config(tmp_path)
    claude = tmp_path / "claude.json"
    claude.write_bytes(b'\xef\xbb\xbf{"mcpServers": {"other": {"command": "x"}}}')
    result = run_cli(config, "install", "claude-desktop", "--write", "--claude-config", str(claude))
    assert result.returncode == 0, result.stderr
    assert set(json.loads(claude.read_text(encoding="utf-8"))["mcpServers"]) == {"other", "mcp-tools"}


def test_install_into_a_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    result = run_cli(demo_config(tmp_path), "install", "claude-desktop", "--write", "--claude-config", str(tmp_path))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1 and str(tmp_path) in result.stderr


TARGET = ["--args", '{"target": "t"}']


def test_ctrl_c_at_the_prompt_declines_and_is_audited(tmp_path: Path) -> None:
    import signal

    config = demo_config(tmp_path)
    _, out, code = answer_on_terminal(config, "call", "demo.erase", *TARGET, answer=signal.SIGINT)
    assert code == 1
    assert out.strip() == "Not run (declined_by_user): demo.erase was not run: you declined it."
    audit = [json.loads(line) for line in run_cli(config, "audit", "--json").stdout.splitlines()]
    assert [(row["tool"], row["decision"], row["outcome"]) for row in audit] == [
        ("demo.erase", "declined", "declined_by_user")
    ]


def test_audit_tail_counts_rows_exactly_and_refuses_negative_counts(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    for text in ("a", "b", "c"):
        assert run_cli(config, "call", "demo.echo", "--args", json.dumps({"text": text})).returncode == 0

    def rows(*tail: str) -> list[str]:
        result = run_cli(config, "audit", "--json", *tail)
        assert result.returncode == 0, result.stderr
        return [json.loads(line)["arguments"]["text"] for line in result.stdout.splitlines()]

    assert rows() == ["a", "b", "c"]
    assert rows("--tail", "2") == ["b", "c"]
    assert rows("--tail", "0") == []
    plain = run_cli(config, "audit", "--tail", "0")
    assert plain.returncode == 0 and plain.stdout == ""
    for bad, says in (("-1", "-1 is negative; give 0 or more rows"), ("two", "'two' is not a whole number")):
        refused = run_cli(config, "audit", "--tail", bad)
        assert refused.returncode == 2 and says in refused.stderr and refused.stdout == ""


def test_any_command_given_a_folder_as_config_says_it_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "settings"
    folder.mkdir()
    for command in (("tools",), ("audit",), ("config", "init")):
        result = run_cli(folder, *command)
        assert result.returncode != 0 and "Traceback" not in result.stderr
        assert f"{folder} is a folder" in result.stderr and "does not exist" not in result.stderr, command
        assert f"--config {folder / 'config.toml'} config init" in result.stderr
    assert not (folder / "config.toml").exists()
    written = run_cli(folder / "config.toml", "config", "init")
    assert written.returncode == 0, written.stderr
    pointed = run_cli(folder, "tools")
    assert pointed.returncode == 2 and f"e.g. --config {folder / 'config.toml'}" in pointed.stderr


def test_the_cli_speaks_to_the_person_not_the_model(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    prompt, out, code = answer_on_terminal(config, "call", "demo.erase", "--args", '{"target": "t"}', answer=b"n\n")
    shown = prompt.decode()
    assert "Erase 't'" in shown and 'target: "t"' in shown and shown.count("?") == 1  # one question: Run it?
    assert code == 1 and "you declined it" in out and "Do not retry" not in out and "ask the person" not in out
    waiting = run_cli(config, "call", "demo.erase", "--args", '{"target": "u"}')  # no terminal: nobody to ask
    approval = json.loads(run_cli(config, "approvals", "list", "--json").stdout)[0]["id"]
    assert waiting.returncode == 1 and f"approvals approve {approval}`" in waiting.stdout
    assert "then run the same command again" in waiting.stdout and "call demo_erase again" not in waiting.stdout


def test_the_approve_command_call_prints_works_as_printed_off_path(tmp_path: Path) -> None:
    """The venv is not on PATH and the config is not the default one: pasted, it still approves."""
    config = demo_config(tmp_path, "[files]\n", servers='["files"]')
    (tmp_path / "data" / "files").mkdir(parents=True)
    (tmp_path / "data" / "files" / "old.txt").write_text("x", encoding="utf-8")
    env = child_env(PATH="/usr/bin:/bin", HOME=str(tmp_path / "home"))
    command = [sys.executable, "-m", "mcp_tools", "--config", str(config), "call", "files.delete"]
    waiting = subprocess.run(
        [*command, "--args", '{"path": "old.txt"}'], capture_output=True, text=True, env=env, cwd=str(tmp_path)
    )
    assert waiting.returncode == 1, waiting.stderr
    printed = waiting.stdout.split("Approve it with `", 1)[1].split("`", 1)[0]
    pasted = subprocess.run(printed, shell=True, capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert pasted.returncode == 0, (printed, pasted.stderr)
    assert pasted.stdout.startswith("Approved apr-")


@pytest.mark.parametrize("command", [["serve"], ["tools"]])
def test_namespaces_option_chooses_what_runs_and_names_itself_in_errors(tmp_path: Path, command: list[str]) -> None:
    result = run_cli(demo_config(tmp_path), *command, "--namespaces", "demo,filez")
    assert result.returncode == 2 and "--namespaces: unknown namespace 'filez'; did you mean 'files'?" in result.stderr
    assert "deprecated" not in result.stderr


def test_servers_option_still_works_with_a_deprecation_note(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo", "files"]')
    new = run_cli(config, "tools", "--json", "--namespaces", "demo")
    old = run_cli(config, "tools", "--json", "--servers", "demo")
    assert new.returncode == old.returncode == 0
    assert {row["name"].split(".")[0] for row in json.loads(old.stdout)} == {"demo"}
    assert old.stdout == new.stdout
    assert old.stderr.count("--servers is deprecated; use --namespaces") == 1
    assert "deprecated" not in new.stderr


def test_servers_and_namespaces_options_together_are_refused(tmp_path: Path) -> None:
    result = run_cli(demo_config(tmp_path), "tools", "--namespaces", "demo", "--servers", "demo")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2 and "--namespaces and --servers name the same thing" in result.stderr
    assert result.stdout == ""


def test_the_servers_key_in_a_config_file_is_noted_once_per_run(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    config.write_text(config.read_text().replace("namespaces = ", "servers = "))
    result = run_cli(config, "doctor")
    assert result.stderr.count("[server] servers is deprecated; call it namespaces") == 1


def test_serve_imports_no_other_command_groups_heavy_modules(tmp_path: Path) -> None:
    """Start-up time matters for `serve`: what call-text, tools --budget, the approvals page, doctor
    and config init need stays unimported."""
    config = demo_config(tmp_path, servers='["files"]')
    code = (
        "import json, sys; from mcp_tools.cli import main;"
        f"code = main(['--config', {str(config)!r}, 'serve']);"
        "print('MODULES', json.dumps(sorted(sys.modules)), code, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=ROOT,
    )
    line = next(line for line in result.stderr.splitlines() if line.startswith("MODULES "))
    modules = set(json.loads(line.split(" ", 1)[1].rsplit(" ", 1)[0]))
    assert line.endswith(" 0") and "mcp_tools.transports.mcp_server" in modules  # it did serve
    others = {
        "mcp_tools.textcalls",
        "mcp_tools.transports.budget",
        "mcp_tools.approvals.page",
        "mcp_tools.composition.config_template",
        "mcp_tools.cli.google",
    } & modules
    assert not others, others


def test_install_keeps_the_existing_entrys_env_and_keeps_a_backup(tmp_path: Path) -> None:
    """ATTACK on the person's setup: re-running --write must not drop the Telegram token in env."""
    config = demo_config(tmp_path)
    claude = tmp_path / "claude.json"
    before = {
        "mcpServers": {
            "mcp-tools": {
                "command": "/old/python",
                "args": ["-m", "mcp_tools", "serve"],
                "env": {"MCP_TOOLS_TELEGRAM_TOKEN": "123:abc"},
                "disabled": False,
            }
        }
    }
    claude.write_text(json.dumps(before))
    result = run_cli(config, "install", "claude-desktop", "--write", "--claude-config", str(claude))
    assert result.returncode == 0, result.stderr
    entry = json.loads(claude.read_text())["mcpServers"]["mcp-tools"]
    assert entry["env"] == {"MCP_TOOLS_TELEGRAM_TOKEN": "123:abc"} and entry["disabled"] is False
    assert entry["args"] == ["-m", "mcp_tools", "--config", str(config), "serve"] and entry["command"] != "/old/python"
    assert "Updated 'mcp-tools'" in result.stdout and "kept its disabled, env" in result.stdout
    assert "Added" not in result.stdout
    backup = tmp_path / "claude.json.bak"
    assert json.loads(backup.read_text()) == before and str(backup) in result.stdout
    assert "123:abc" not in result.stdout + result.stderr


def test_install_into_a_new_file_says_added_and_makes_no_backup(tmp_path: Path) -> None:
    claude = tmp_path / "Claude" / "claude.json"
    result = run_cli(demo_config(tmp_path), "install", "claude-desktop", "--write", "--claude-config", str(claude))
    assert result.returncode == 0, result.stderr
    assert "Added 'mcp-tools'" in result.stdout
    assert list(claude.parent.iterdir()) == [claude]


def test_install_writes_through_a_symlinked_claude_config(tmp_path: Path) -> None:
    """A config kept in a dotfiles folder and linked into place stays a link to the updated file."""
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"mcpServers": {}, "theme": "dark"}))
    link = tmp_path / "claude.json"
    link.symlink_to(real)
    result = run_cli(demo_config(tmp_path), "install", "claude-desktop", "--write", "--claude-config", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and link.resolve() == real
    assert set(json.loads(real.read_text())["mcpServers"]) == {"mcp-tools"}
    assert (tmp_path / "dotfiles" / "claude.json.bak").is_file()


@pytest.mark.parametrize("command", [["config", "init", "--force"], ["install", "claude-desktop", "--write"]])
def test_a_special_file_is_never_replaced_by_a_file(tmp_path: Path, command: list[str]) -> None:
    """As root, `--config /dev/full --force` replaced the device node with a plain file. A FIFO
    stands in for the device here (so a regression cannot break the machine running the tests);
    a link to one is refused the same way, and so is a folder as Claude Desktop's config."""
    special = tmp_path / "pipe"
    os.mkfifo(special)
    link = tmp_path / "config-link"
    link.symlink_to(special)
    folder = tmp_path / "folder"
    folder.mkdir()
    targets = [special, link] + ([folder] if command[0] == "install" else [])
    for target in map(str, targets):
        if command[0] == "config":
            result = subprocess.run(
                [sys.executable, "-m", "mcp_tools", "--config", target, *command],
                capture_output=True,
                text=True,
                env=child_env(),
                cwd=str(ROOT),
            )
        else:
            result = run_cli(demo_config(tmp_path), *command, "--claude-config", target)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode == 1 and "not a regular file" in result.stderr, result.stderr
        assert stat.S_ISFIFO(special.lstat().st_mode) and link.is_symlink() and folder.is_dir()


def test_config_init_force_writes_through_a_link_and_keeps_a_backup(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    real.write_text("# mine\n")
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    result = subprocess.run(
        [sys.executable, "-m", "mcp_tools", "--config", str(link), "config", "init", "--force"],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=str(ROOT),
    )
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and "[server]" in real.read_text()
    assert (tmp_path / "dotfiles" / "config.toml.bak").read_text() == "# mine\n"


def test_tools_lists_what_runs_and_names_a_namespace_asked_for_that_cannot_start(tmp_path: Path) -> None:
    """`tools` answers like `serve` would start: the tools it can serve, then why the rest cannot."""
    config = demo_config(tmp_path, servers='["demo", "notes"]')
    listed = run_cli(config, "tools", "--json")
    assert listed.returncode == 1
    assert "demo.echo" in {row["name"] for row in json.loads(listed.stdout)}
    assert "namespace notes cannot start" in listed.stderr and "[notes] vault" in listed.stderr
    budget = run_cli(config, "tools", "--budget", "--tools", "demo,notes.core")
    assert budget.returncode == 0 and "notes.search" in budget.stdout  # definitions need no vault


HIDING = {"rlo": "\u202e", "lri": "\u2066", "zwsp": "\u200b", "newline": "\n"}


@pytest.mark.parametrize("name", sorted(HIDING))
def test_audit_escapes_what_could_reorder_or_hide_text_in_keys_and_values(tmp_path: Path, name: str) -> None:
    """A model picks argument names and values; the audit a person reads must show them as they
    are: `exe.txt` spelled backwards by U+202E, or a zero-width space, stays visible as an escape."""
    char = HIDING[name]
    config = demo_config(tmp_path)
    arguments = {"text": f"OK{char}txt.exe", f"x{char}": f"v{char}"}
    called = run_cli(config, "call", "demo.echo", "--args", json.dumps(arguments))
    assert called.returncode != 0 and "invalid_arguments" in called.stdout + called.stderr
    escape = {"\n": "\\n"}.get(char, f"\\u{ord(char):04x}")
    assert f"does not take x{escape};" in called.stdout + called.stderr
    assert char not in (called.stdout + called.stderr).rstrip("\n")
    text = run_cli(config, "audit", "--tail", "1")
    assert text.returncode == 0 and text.stdout.count("\n") == 1
    assert char not in text.stdout.rstrip("\n")
    assert f'"x{escape}": "v{escape}"' in text.stdout and f'"OK{escape}txt.exe"' in text.stdout
    as_json = run_cli(config, "audit", "--json", "--tail", "1")
    assert char not in as_json.stdout.rstrip("\n") and as_json.stdout.count("\n") == 1
    assert json.loads(as_json.stdout)["arguments"] == arguments  # still the exact row, as JSON


def test_audit_escapes_a_tool_name_the_model_made_up(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    assert run_cli(config, "call", "demo.\u202eohce").returncode != 0
    shown = run_cli(config, "audit", "--tail", "1").stdout
    assert "demo.\\u202eohce" in shown and "\u202e" not in shown
    assert "\u202e" not in run_cli(config, "audit", "--json", "--tail", "1").stdout


def test_unknown_edit_fields_are_matched_to_their_own_names_and_the_list_given_once(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["files"]')
    (tmp_path / "data" / "files").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "files" / "a.txt").write_text("a")
    edits = {"path": "a.txt", "edits": [{"old": "a", "new": "b"}]}
    result = run_cli(config, "call", "files.edit", "--args", json.dumps(edits))
    said = result.stdout + result.stderr
    assert "does not take edits[0].old; did you mean old_string " in said
    assert "does not take edits[0].new; did you mean new_string " in said
    assert said.count("It takes old_string, new_string, replace_all") == 1


def test_an_unknown_tool_gets_suggestions_in_the_form_it_was_written(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["files"]')
    dotted = run_cli(config, "call", "files.nope")
    assert "Did you mean files.read or " in dotted.stdout + dotted.stderr and "files_" not in dotted.stdout
    wire = run_cli(config, "call", "files_nope")
    assert "Did you mean files_read or " in wire.stdout + wire.stderr


def test_doctor_counts_in_words_and_its_hint_names_only_what_is_left_out(tmp_path: Path) -> None:
    rule = '[[policy.rules]]\nmatch = "demo.echo"\nrisk = "low"\n'
    config = demo_config(tmp_path, rule)
    doctor = run_cli(config, "doctor", "--tools", "demo.echo")
    assert "policy:    1 own rule, " in doctor.stdout
    assert "  files     off" in doctor.stdout  # the namespace the old hint named
    assert "not served: 3 tools are available but not selected; to serve more, add" in doctor.stdout
    assert "a tier ('demo.core') or a tool ('demo.note') to [server] tools" in doctor.stdout
    assert "('files" not in doctor.stdout
    rules = '[[policy.rules]]\nmatch = "demo.note"\nrisk = "low"\n'
    assert "policy:    2 own rules, " in run_cli(demo_config(tmp_path, rule + rules), "doctor").stdout
