"""Known secrets never leave: results, errors, audit rows, approvals, config errors and logs."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from mcp_tools.composition.app import build_app
from mcp_tools.core.config import ConfigError, validate_section
from mcp_tools.servers.web import WebConfig
from mcp_tools.util.logs import BODY_LOGGERS, configure_logging
from mcp_tools.util.secrets import KnownSecrets, known_secrets, scrub_text, strip_userinfo
from tests.harness import connect, failure, make_config, ok, text_of
from tests.processes import STOP_POLL_SECONDS, run_cli, write_config

TAVILY = "tvly-prod-Zq81mLk2PfX0aa93"
CALDAV = "caldav-pass-7Hq2w9"
DEMO = {"server": {"servers": ["demo"]}}


# -- the registry ------------------------------------------------------------------------------


def test_a_secret_and_every_identifying_prefix_are_scrubbed() -> None:
    secrets = KnownSecrets()
    secrets.add(TAVILY)
    assert secrets.scrub(f"key={TAVILY}!") == "key=[redacted]!"
    assert secrets.scrub(f"cut: {TAVILY[:16]}") == "cut: [redacted]"  # the vendor's tag and 4 more
    assert secrets.scrub(f"cut: {TAVILY[:20]}…") == "cut: [redacted]…"
    assert secrets.scrub(f"{TAVILY}{TAVILY}") == "[redacted][redacted]"
    assert secrets.scrub(f"every key starts {TAVILY[:10]}") == f"every key starts {TAVILY[:10]}"
    assert secrets.present(f'{{"k": "{TAVILY[:17]}"}}') and not secrets.present("nothing here")


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
    assert (
        strip_userinfo("at https://u:SECRET@example.com/x and ftp://bob@h:21")
        == "at https://example.com/x and ftp://h:21"
    )
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
        prefix = await client.call_tool("demo_echo", {"text": f"its start {TAVILY[:18]}"})
        refused = failure(await client.call_tool("demo_echo", {"text": TAVILY, "extra": TAVILY}))
        pending = failure(await client.call_tool("demo_erase", {"target": f"https://u:{CALDAV}@host/{TAVILY}"}))
    assert ok(echoed) == {"echo": "hello: the key is [redacted]"}
    assert TAVILY[:16] not in text_of(echoed) + text_of(prefix) + str(refused) + str(pending)
    approval = app.store.get_approval(pending["approval_id"])
    assert approval is not None and TAVILY[:16] not in str(approval) and CALDAV not in str(approval)
    stored = b"".join(path.read_bytes() for path in (tmp_path / "state").glob("policy.sqlite3*"))
    assert stored and TAVILY[:16].encode() not in stored and CALDAV.encode() not in stored


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
        raise RuntimeError(f"upstream said {TAVILY[:18]}")
    except RuntimeError:
        log.exception("failed")
    written = stream.getvalue()
    assert "[redacted]" in written and "RuntimeError" in written
    assert TAVILY[:16] not in written and "user:pw" not in written
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


# -- attacks on the scrubber ---------------------------------------------------------------------

CONFIG_KEY = "tvly-dev-" + "Zq81mLk2PfX0aa93bQw7RtYu4Iop"
ENV_KEY = "tvly-dev-" + "Hn52vBc8XkE1ss07pLm3NbVc6Zxa"  # same vendor tag, same length
SHARED_PREFIX_SCRIPT = """
import sys
from mcp_tools.util.secrets import KnownSecrets
config_key, env_key = sys.argv[1:3]
secrets = KnownSecrets()
secrets.add(config_key)
secrets.add(env_key)
print(secrets.scrub(f"a={config_key} b={env_key} c={env_key[:20]}"))
"""


@pytest.mark.parametrize("seeds", [range(0, 8), range(8, 16)])
def test_two_keys_sharing_a_vendor_prefix_are_scrubbed_whole_whatever_the_hash_seed(seeds: range) -> None:
    """Set iteration order follows PYTHONHASHSEED: scrubbing must not depend on it."""
    import os
    import subprocess
    import sys

    for seed in seeds:
        environ = {**os.environ, "PYTHONHASHSEED": str(seed)}
        result = subprocess.run(
            [sys.executable, "-c", SHARED_PREFIX_SCRIPT, CONFIG_KEY, ENV_KEY],
            capture_output=True,
            text=True,
            env=environ,
            timeout=60,
            check=True,
        )
        assert result.stdout.strip() == "a=[redacted] b=[redacted] c=[redacted]", f"PYTHONHASHSEED={seed}"


def _alignments(secret: str) -> list[str]:
    """The secret inside a longer base64 stream, at each of the three byte offsets."""
    import base64

    return [
        base64.b64encode(b"\x00\xff\x10"[:shift] + secret.encode() + b" trailing bytes").decode() for shift in (0, 1, 2)
    ]


def _encoded_forms(secret: str) -> dict[str, str]:
    import base64
    from urllib.parse import quote

    forms = {
        "base64": base64.b64encode(secret.encode()).decode(),
        "base64url": base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
        "url-encoded": quote(secret, safe=""),
        "every character URL-encoded": "".join(f"%{byte:02x}" for byte in secret.encode()),
        "JSON \\/": secret.replace("/", "\\/"),
        "JSON \\u00XX": "".join(f"\\u{ord(char):04X}" for char in secret),
        "hex": secret.encode().hex(),
        "HEX": secret.encode().hex().upper(),
    }
    forms.update({f"inside a base64 stream, offset {shift}": text for shift, text in enumerate(_alignments(secret))})
    forms.update(
        {
            f"inside a base64url stream, offset {shift}": text.replace("+", "-").replace("/", "_")
            for shift, text in enumerate(_alignments(secret))
        }
    )
    return forms


SLASHY = "Kd8/+q2Zx?v=9&w/Lp0+Rt3~u"  # base64 of it holds '+' and '/', its URL form '%2F' and '%2B'


@pytest.mark.parametrize(("name", "encoded"), list(_encoded_forms(SLASHY).items()))
def test_encoded_forms_of_a_known_secret_are_scrubbed(name: str, encoded: str) -> None:
    import base64

    secrets = KnownSecrets()
    secrets.add(SLASHY)
    scrubbed = secrets.scrub(f"the result: {encoded} (end)")
    assert "[redacted]" in scrubbed and scrubbed.endswith(" (end)"), name
    assert secrets.present(encoded)
    # what is left decodes to nothing of the secret: no run of its identifying characters survives
    for piece in scrubbed.split("[redacted]"):
        assert SLASHY[:8] not in piece
        for text in (piece.strip(), piece.strip()[1:], piece.strip()[2:], piece.strip()[3:]):
            try:
                decoded = base64.b64decode(text + "===", altchars=b"-_" if "base64url" in name else None)
            except ValueError:
                continue
            assert SLASHY[:6].encode() not in decoded


def test_ordinary_base64_and_escaped_text_is_left_alone() -> None:
    import base64

    secrets = KnownSecrets()
    secrets.add(SLASHY)
    text = '{"path": "a\\/b", "note": "100%25 sure \\u00e9", "blob": "' + base64.b64encode(b"x" * 300).decode() + '"}'
    assert secrets.scrub(text) == text and not secrets.present(text)


@pytest.mark.anyio
async def test_a_token_starting_with_a_word_leaves_results_readable_and_valid(
    tmp_path: Path, demo_namespace: str
) -> None:
    """An HTTP token `approval...` once turned every `approval_required` into `[redacted]_required`."""
    token = "approval7Qm2Xc9Lp0Vb4Nz8"
    app = build_app(make_config(tmp_path, DEMO, environ={"MCP_TOOLS_HTTP_TOKEN": token}))
    async with connect(tmp_path, app=app, elicit=None) as client:  # the conftest checks each result's schema
        pending = failure(await client.call_tool("demo_erase", {"target": "notes/old.md"}))
        echoed = ok(await client.call_tool("demo_echo", {"text": f"approval needed; token {token[:14]}"}))
    assert pending["kind"] == "approval_required"
    assert app.store.get_approval(pending["approval_id"]) is not None
    assert echoed == {"echo": "hello: approval needed; token [redacted]"}


@pytest.mark.anyio
async def test_an_error_kind_stays_readable_even_when_a_secret_is_an_ordinary_word(
    tmp_path: Path, demo_namespace: str
) -> None:
    app = build_app(make_config(tmp_path, DEMO, environ={"MCP_TOOLS_HTTP_TOKEN": "required"}))
    async with connect(tmp_path, app=app, elicit=None) as client:
        pending = failure(await client.call_tool("demo_erase", {"target": "notes/old.md"}))
    assert pending["kind"] == "approval_required" and pending["approval_id"]


@pytest.mark.anyio
async def test_a_host_credential_echoed_json_escaped_is_scrubbed(tmp_path: Path) -> None:
    """An upstream that echoes the credential with `\\/` and `\\u00XX` escapes gets none of it back out."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests.servers.http_requests.fixtures import fixed_resolver

    credential = "Kd8/q2Zx+v9wLp0/Rt3uYh7"

    class Escaping(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            sent = self.headers.get("X-Key", "")
            unicode = "".join(f"\\u{ord(char):04x}" for char in sent)  # as some JSON encoders write it
            slashes = sent.replace("/", "\\/")
            data = f'{{"slashes": "{slashes}", "unicode": "{unicode}"}}'.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.2", 0), Escaping)
    thread = threading.Thread(target=httpd.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    outbound = {
        "enabled": True,
        "allow_hosts": ["api.test"],
        "allow_networks": ["127.0.0.2/32"],
        "allow_plain_http": True,
        "hosts": {"api.test": {"headers": {"X-Key": credential}}},
    }
    try:
        app = build_app(make_config(tmp_path, {"server": {"servers": ["http"]}, "http": {"outbound": outbound}}))
        app.services["http"].resolver = fixed_resolver({"api.test": ["127.0.0.2"]})
        async with connect(tmp_path, app=app) as client:
            result = await client.call_tool("http_request", {"url": f"http://api.test:{httpd.server_address[1]}/"})
    finally:
        httpd.shutdown()
        httpd.server_close()
    data = ok(result)
    returned = json.dumps(result.model_dump(mode="json"))
    assert "[redacted]" in data["body"]
    for form in (credential, credential.replace("/", "\\/"), credential[:8], "\\u004b\\u0064\\u0038\\u002f"):
        assert form not in returned and form not in data["body"]


def test_a_credential_registered_with_its_scheme_word_leaves_the_word_readable() -> None:
    secrets = KnownSecrets()
    secrets.add("Bearer Xk29pLm4Qw8zTr61")
    assert secrets.scrub("Authorization: Bearer Xk29pLm4Qw8zTr61") == "Authorization: Bearer [redacted]"
    assert (
        secrets.scrub("send a Bearer token, e.g. Bearer%20Xk29pLm4Qw8z")
        == "send a Bearer token, e.g. Bearer%20[redacted]"
    )


def test_attack_the_token_serve_http_made_is_redacted_by_every_process_of_its_config(tmp_path: Path) -> None:
    """`serve --http` without a configured token makes one in `<state_dir>/http-token`. A model that
    gets hold of it and passes it through `mcp-tools call` (another process) must not leave it in the
    audit row or the output that process writes."""
    from tests.processes import demo_config

    config = demo_config(tmp_path)
    (tmp_path / "state").mkdir()
    generated = "Vq3x9L_kP2mZ8rT4wY7uB1nC6dF0gH5jAa"
    (tmp_path / "state" / "http-token").write_text(generated + "\n")
    called = run_cli(config, "call", "demo.echo", "--args", f'{{"text": "token {generated}"}}', "--json")
    assert called.returncode == 0, called.stderr
    assert generated not in called.stdout and "[redacted]" in called.stdout
    audit = run_cli(config, "audit", "--json")
    assert generated not in audit.stdout and generated[:12] not in audit.stdout
    assert "[redacted]" in audit.stdout
