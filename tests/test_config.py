"""Config loading: embedded defaults, validation errors that name the key, secrets from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_tools.core.config import ConfigError, load_config, parse_config


def test_no_config_file_means_embedded_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing-here"))
    monkeypatch.setenv("HOME", str(tmp_path))
    config = load_config(None, {})
    assert config.source is None
    assert config.server.servers is None and config.server.wire_separator == "_"
    assert config.policy.on_no_elicitation == "approve_out_of_band" and config.policy.approval_ttl_seconds == 600
    assert config.http.host == "127.0.0.1" and config.http.port == 8765


def test_explicit_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml", {})


def test_a_folder_given_as_the_config_names_the_file_to_give(tmp_path: Path) -> None:
    folder = tmp_path / "settings"
    folder.mkdir()
    with pytest.raises(ConfigError) as empty:
        load_config(folder, {})
    assert f"{folder} is a folder" in str(empty.value) and "does not exist" not in str(empty.value)
    assert f"--config {folder / 'config.toml'} config init" in str(empty.value)
    (folder / "config.toml").write_text('[server]\nnamespaces = ["files"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as holding:
        load_config(None, {"MCP_TOOLS_CONFIG": str(folder)})
    assert f"{folder} is a folder; give the config file inside it, e.g. --config {folder / 'config.toml'}" in str(
        holding.value
    )
    assert load_config(folder / "config.toml", {}).server.namespaces == ["files"]


def test_env_variable_selects_the_config(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[policy]\nread_only = true\n")
    config = load_config(None, {"MCP_TOOLS_CONFIG": str(path)})
    assert config.source == path and config.policy.read_only is True


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"policy": {"on_no_elicitation": "maybe"}}, "policy.on_no_elicitation: Input should be"),
        ({"policy": {"rules": [{"match": "x.*", "risk": "severe"}]}}, "policy.rules.0.risk"),
        ({"server": {"servers": ["gmial"]}}, "unknown namespace 'gmial'"),
        ({"http": {"port": "eighty"}}, "http.port"),
        ({"http": {"tokn": {}}}, "http.tokn: unknown setting"),
        ({"frobnicate": {}}, "unknown section [frobnicate]"),
        ({"sever": {}}, "unknown section [sever]; did you mean [server]?"),
        ({"notess": {}}, "did you mean [notes]?"),
    ],
)
def test_errors_name_the_bad_key(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, {})
    assert message in str(caught.value)


def test_invalid_toml_is_reported_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[policy\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path, {})


def test_a_config_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Windows Notepad saves UTF-8 with a BOM; it is not part of the TOML and must not be line 1's error."""
    path = tmp_path / "c.toml"
    path.write_bytes("\ufeff# Réglages\n[policy]\nread_only = true\n".encode())
    config = load_config(path, {})
    assert config.policy.read_only is True and config.source == path


def test_a_byte_order_mark_inside_the_file_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes("[policy]\n\ufeffread_only = true\n".encode())
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path, {})


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])  # "utf-16" writes a byte-order mark
def test_a_config_saved_as_utf16_is_refused_saying_how_to_save_it(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes('[server]\nlog_level = "info"\n'.encode(encoding))
    with pytest.raises(ConfigError) as caught:
        load_config(path, {})
    message = str(caught.value)
    assert message.startswith(f"{path}: the config file must be UTF-8") and "looks like UTF-16" in message
    assert "save it as UTF-8" in message and "\n" not in message


def test_a_config_saved_as_latin1_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes('[server]\n# café\nlog_level = "info"\n'.encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(path, {})
    assert str(caught.value) == (
        f"{path}: the config file must be UTF-8, but byte 0xe9 on line 2 is not "
        "(saved as Latin-1 or Windows-1252?); save it as UTF-8"
    )


def test_every_command_reports_a_config_that_is_not_utf8_in_one_line(tmp_path: Path) -> None:
    from tests.processes import run_cli

    path = tmp_path / "u16.toml"
    path.write_bytes('[server]\nlog_level = "info"\n'.encode("utf-16"))
    for command in (["doctor"], ["serve", "--http"], ["approvals", "list"]):
        result = run_cli(path, *command)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.strip().splitlines() == [
            f"mcp-tools: {path}: the config file must be UTF-8, and this one looks like UTF-16: save it as UTF-8 "
            '(in Notepad: Save As, Encoding "UTF-8"; or run: iconv -f UTF-16 -t UTF-8 FILE > NEW)'
        ]


def test_token_values_never_appear_in_errors() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"http": {"tokens": {"laptop": 12345678}}}, {})
    assert "12345678" not in str(caught.value)


def test_tokens_from_config_and_environment() -> None:
    config = parse_config(
        {"http": {"tokens": {"laptop": "a"}}},
        {"MCP_TOOLS_HTTP_TOKEN": "b", "MCP_TOOLS_HTTP_TOKEN_CI_RUNNER": "c"},
    )
    assert config.http_tokens() == {"laptop": "a", "env": "b", "ci_runner": "c"}
    assert "'a'" not in repr(config.http)


def test_state_and_data_dirs_from_environment(tmp_path: Path) -> None:
    config = parse_config({}, {"MCP_TOOLS_STATE_DIR": str(tmp_path / "s"), "MCP_TOOLS_DATA_DIR": str(tmp_path / "d")})
    assert config.state_dir() == tmp_path / "s" and config.data_dir() == tmp_path / "d"


@pytest.mark.parametrize("key", ["state_dir", "data_dir"])
@pytest.mark.parametrize("command", [["doctor"], ["serve"], ["tools"]])
def test_a_state_or_data_dir_that_cannot_be_made_is_a_config_error_not_a_traceback(
    tmp_path: Path, key: str, command: list[str]
) -> None:
    from tests.processes import run_cli, write_config

    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    config = write_config(tmp_path / "config.toml", f'[server]\n{key} = "{blocker / "below"}"\n')
    result = run_cli(config, *command)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2
    assert f"server.{key}" in result.stderr and str(blocker / "below") in result.stderr


# --- [server] namespaces, and servers, its old spelling --------------------------------------------


@pytest.fixture
def fresh_deprecations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each old spelling is named once a process: start this test as a new process would."""
    from mcp_tools.core import config

    monkeypatch.setattr(config, "_deprecations_shown", set())


def test_namespaces_names_what_runs(capsys: pytest.CaptureFixture[str], fresh_deprecations: None) -> None:
    config = parse_config({"server": {"namespaces": ["files", "notes"]}}, {})
    assert config.server.namespaces == ["files", "notes"]
    assert capsys.readouterr().err == ""


def test_servers_still_works_and_says_once_on_stderr_that_it_is_deprecated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh_deprecations: None
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[server]\nservers = ["files"]\n')
    assert load_config(path, {}).server.namespaces == ["files"]
    assert load_config(path, {}).server.namespaces == ["files"]  # read again: no second note
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "mcp-tools: [server] servers is deprecated; call it namespaces (the same list)\n"


def test_servers_and_namespaces_together_is_an_error_naming_both(fresh_deprecations: None) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"server": {"namespaces": ["files"], "servers": ["notes"]}}, {})
    assert "namespaces and servers are the same setting" in str(caught.value)
    assert "keep namespaces only" in str(caught.value)


def test_an_unknown_namespace_is_refused_under_either_spelling(fresh_deprecations: None) -> None:
    for key in ("namespaces", "servers"):
        with pytest.raises(ConfigError, match=r"server\.namespaces: Value error, unknown namespace 'gmial'"):
            parse_config({"server": {key: ["gmial"]}}, {})


def test_an_unknown_section_lists_each_known_section_once() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"frobnicate": {}}, {})
    listed = str(caught.value).split("expected one of: ")[1].split(", ")
    assert len(listed) == len(set(listed)) and "server" in listed and "notes" in listed
