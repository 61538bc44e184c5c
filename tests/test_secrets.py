"""Known secrets never leave: results, errors, audit rows, approvals, config errors and logs."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from mcp_tools.app import build_app
from mcp_tools.config import ConfigError, validate_section
from mcp_tools.logs import BODY_LOGGERS, configure_logging
from mcp_tools.secrets import KnownSecrets, known_secrets, scrub_text, strip_userinfo
from mcp_tools.servers.web import WebConfig
from tests.harness import connect, failure, make_config, ok, text_of
from tests.processes import run_cli, write_config

TAVILY = "tvly-prod-Zq81mLk2PfX0aa93"
CALDAV = "caldav-pass-7Hq2w9"
DEMO = {"server": {"servers": ["demo"]}}


# -- the registry ------------------------------------------------------------------------------


def test_a_secret_and_every_prefix_of_eight_or_more_characters_are_scrubbed() -> None:
    secrets = KnownSecrets()
    secrets.add(TAVILY)
    assert secrets.scrub(f"key={TAVILY}!") == "key=[redacted]!"
    assert secrets.scrub(f"cut: {TAVILY[:8]}") == "cut: [redacted]"
    assert secrets.scrub(f"cut: {TAVILY[:15]}…") == "cut: [redacted]…"
    assert secrets.scrub(f"{TAVILY}{TAVILY}") == "[redacted][redacted]"
    assert secrets.scrub(f"short {TAVILY[:7]} stays") == f"short {TAVILY[:7]} stays"
    assert secrets.present(f'{{"k": "{TAVILY[:9]}"}}') and not secrets.present("nothing here")


def test_secrets_come_from_config_models_and_secret_named_environment_variables() -> None:
    class Nested(BaseModel):
        password: SecretStr

    class Section(BaseModel):
        token: SecretStr
        nested: list[Nested]
        name: str = "not a secret at all"

    secrets = KnownSecrets()
    secrets.add_from_model(Section(token=SecretStr("tok-model-123456"), nested=[Nested(password=SecretStr(CALDAV))]))
    secrets.add_from_environ(
        {
            "TAVILY_API_KEY": TAVILY,
            "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEYID",  # an id, not a secret
            "GOOGLE_APPLICATION_CREDENTIALS": "/home/you/creds.json",  # a path to one
            "MCP_TOOLS_HTTP_TOKEN_PHONE": "/etc/not-a-token-path",
            "HOME": "/home/you",
            "SHORT_TOKEN": "abc",  # too short to scrub without mangling text
        }
    )
    text = f"tok-model-123456 {CALDAV} {TAVILY} AKIAEXAMPLEKEYID /home/you/creds.json abc not a secret at all"
    assert secrets.scrub(text) == "[redacted] [redacted] [redacted] AKIAEXAMPLEKEYID /home/you/creds.json abc " + (
        "not a secret at all"
    )


def test_url_credentials_are_stripped_from_messages() -> None:
    assert strip_userinfo("at https://u:SECRET@example.com/x and ftp://bob@h:21") == "at https://example.com/x and ftp://h:21"
    assert strip_userinfo("mail me at a@b.c, see https://example.com") == "mail me at a@b.c, see https://example.com"
    assert strip_userinfo("https://u:p@ss@host/x?q=a@b") == "https://host/x?q=a@b"


# -- through the gate ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_results_errors_audit_rows_and_approvals_carry_no_known_secret(
    tmp_path: Path, demo_namespace: str
) -> None:
    app = build_app(make_config(tmp_path, DEMO, environ={"TAVILY_API_KEY": TAVILY}))
    async with connect(tmp_path, app=app, elicit=None) as client:
        echoed = await client.call_tool("demo_echo", {"text": f"the key is {TAVILY}"})
        prefix = await client.call_tool("demo_echo", {"text": f"its start {TAVILY[:10]}"})
        refused = failure(await client.call_tool("demo_echo", {"text": TAVILY, "extra": TAVILY}))
        pending = failure(await client.call_tool("demo_erase", {"target": f"https://u:{CALDAV}@host/{TAVILY}"}))
    assert ok(echoed) == {"echo": "hello: the key is [redacted]"}
    assert TAVILY[:8] not in text_of(echoed) + text_of(prefix) + str(refused) + str(pending)
    approval = app.store.get_approval(pending["approval_id"])
    assert approval is not None and TAVILY[:8] not in str(approval) and CALDAV not in str(approval)
    stored = b"".join(path.read_bytes() for path in (tmp_path / "state").glob("policy.sqlite3*"))
    assert stored and TAVILY[:8].encode() not in stored and CALDAV.encode() not in stored


def test_a_config_error_shows_no_url_credentials(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_section("web", WebConfig, {"api_base_url": "https://u:SECRET-pass@example.com"})
    assert "SECRET-pass" not in str(caught.value) and "u:" not in str(caught.value)
    config = write_config(tmp_path / "c.toml", '[web]\napi_base_url = "https://u:SECRET-pass@example.com"\n')
    result = run_cli(config, "doctor")  # diagnoses: the problem is shown beside the namespace
    assert result.returncode == 1 and "api_base_url" in result.stdout
    assert "SECRET-pass" not in result.stderr + result.stdout


# -- logs ------------------------------------------------------------------------------------------


@pytest.fixture
def clean_logging():
    root = logging.getLogger()
    saved = (root.level, list(root.handlers), {name: logging.getLogger(name).level for name in BODY_LOGGERS})
    yield
    root.setLevel(saved[0])
    for handler in list(root.handlers):
        if handler not in saved[1]:
            root.removeHandler(handler)
    logging.getLogger("mcp_tools").setLevel(logging.NOTSET)
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)


def test_debug_applies_to_our_loggers_only_and_never_to_body_loggers(clean_logging: None) -> None:
    configure_logging("warning", {"MCP_TOOLS_LOG_LEVEL": "debug"})
    assert logging.getLogger("mcp_tools.files").getEffectiveLevel() == logging.DEBUG
    assert logging.getLogger("some.library").getEffectiveLevel() == logging.INFO
    assert logging.getLogger("sse_starlette.sse").getEffectiveLevel() == logging.INFO
    configure_logging("warning", {"MCP_TOOLS_LOG_LEVEL": "debug", "MCP_TOOLS_LIBRARY_LOG_LEVEL": "debug"})
    assert logging.getLogger("some.library").getEffectiveLevel() == logging.DEBUG
    assert logging.getLogger("botocore.parsers").getEffectiveLevel() == logging.INFO  # bodies: never
    configure_logging(None, {})
    assert logging.getLogger("mcp_tools").getEffectiveLevel() == logging.WARNING
    assert logging.getLogger("some.library").getEffectiveLevel() == logging.WARNING


def test_log_lines_are_scrubbed_tracebacks_included(clean_logging: None) -> None:
    known_secrets.add(TAVILY)
    configure_logging("info", {})
    handler = next(h for h in logging.getLogger().handlers if getattr(h, "_mcp_tools", False))
    stream = io.StringIO()
    handler.setStream(stream)  # type: ignore[attr-defined]
    log = logging.getLogger("mcp_tools.test")
    log.warning("calling https://user:pw@example.com with %s", TAVILY)
    try:
        raise RuntimeError(f"upstream said {TAVILY[:12]}")
    except RuntimeError:
        log.exception("failed")
    written = stream.getvalue()
    assert "[redacted]" in written and "RuntimeError" in written
    assert TAVILY[:8] not in written and "user:pw" not in written
    assert scrub_text(f"x {TAVILY}") == "x [redacted]"


@pytest.mark.anyio
async def test_progress_messages_are_scrubbed_and_valid_utf8() -> None:
    from mcp_tools.policy.gate import _guarded_progress

    known_secrets.add(TAVILY)
    seen: list[str | None] = []

    async def client_side(done: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    report = _guarded_progress(client_side)
    assert report is not None
    await report(1, 2, f"sent {TAVILY} to caf\udce9")
    assert seen == ["sent [redacted] to caf\\xe9"]
