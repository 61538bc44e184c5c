"""The Google foundation: signing in, tokens, scopes, retries and error mapping, against the fake."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.cli import main
from mcp_tools.cli.main import build_parser
from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, make_config, ok, text_of
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain, sign_in
from tests.servers.google_accounts_fixtures import put_token, stored_accounts, stored_token

pytestmark = pytest.mark.anyio


def token_data(tmp_path: Path) -> dict[str, Any]:
    return stored_token(tmp_path)


# --- tokens --------------------------------------------------------------------------------------


async def test_a_token_near_expiry_is_refreshed_first_and_persisted(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    gmail.add(plain())
    settings = sign_in(tmp_path, google, expires_in=60)
    before = token_data(tmp_path)
    async with connect(tmp_path, settings) as client:
        ok(await client.call_tool("gmail_search", {}))
        ok(await client.call_tool("gmail_search", {}))
    after = token_data(tmp_path)
    refreshes = [r for r in google.token_requests if r["grant_type"] == "refresh_token"]
    assert len(refreshes) == 1 and refreshes[0]["refresh_token"] == before["refresh_token"]
    assert after["token"] != before["token"] and after["token"] in google.tokens
    assert after["refresh_token"] == before["refresh_token"] and after["expiry"] > before["expiry"]
    assert not (tmp_path / "state" / "google" / "token.json").exists()  # moved into the state store, read once


async def test_a_revoked_access_token_is_refreshed_once_and_the_call_succeeds(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    gmail.add(plain())
    settings = sign_in(tmp_path, google)
    google.tokens.pop(token_data(tmp_path)["token"])
    async with connect(tmp_path, settings) as client:
        ok(await client.call_tool("gmail_search", {}))
    assert token_data(tmp_path)["token"] in google.tokens


async def test_invalid_grant_says_sign_in_again_and_explains_the_seven_days(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    settings = sign_in(tmp_path, google, expires_in=0)
    google.revoke_refresh_tokens()
    async with connect(tmp_path, settings) as client:
        result = await client.call_tool("gmail_search", {})
    error = failure(result)
    assert error["kind"] == "not_configured" and "invalid_grant" in error["message"]
    assert "mcp-tools auth google" in error["hint"] and "7 days" in error["hint"]
    data = token_data(tmp_path)
    assert data["refresh_token"] not in text_of(result)


async def test_a_scope_not_granted_is_named_without_calling_google(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    stored = gmail.add(plain())
    settings = sign_in(tmp_path, google, granted=[scopes.GMAIL_READONLY])
    async with connect(tmp_path, settings) as client:
        ok(await client.call_tool("gmail_read", {"id": stored.id}))
        error = failure(await client.call_tool("gmail_labels", {"ids": [stored.id], "mark_read": True}))
    assert error["kind"] == "not_configured" and "gmail.modify" in error["message"]
    assert error["missing_scopes"] == ["gmail.modify"] and "mcp-tools auth google" in error["hint"]
    assert "gmail.users.messages.modify" not in google.calls


async def test_a_403_for_scopes_from_google_is_mapped_too(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    stored = gmail.add(plain())
    settings = sign_in(tmp_path, google, granted=[scopes.GMAIL_READONLY])
    data = token_data(tmp_path)
    data["scopes"] = sorted(scopes.TOOLS and [scopes.GMAIL_READONLY, scopes.GMAIL_MODIFY])  # the token claims more
    (tmp_path / "state" / "google" / "token.json").write_text(json.dumps(data))  # a file of an older version
    async with connect(tmp_path, settings) as client:
        error = failure(await client.call_tool("gmail_trash", {"ids": [stored.id]}))
    assert error["kind"] == "not_configured" and "gmail.modify" in error["message"]
    assert "403" not in error["message"]


async def test_a_service_account_with_domain_wide_delegation(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    gmail.add(plain(subject="For the delegate"))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    email = "robot@project.iam.gserviceaccount.com"
    key_file = tmp_path / "sa.json"
    key_file.write_text(
        json.dumps(
            {
                "type": "service_account",
                "client_email": email,
                "private_key": pem,
                "private_key_id": "k1",
                "client_id": "1",
                "token_uri": google.url + "token",
                "project_id": "p",
            }
        )
    )
    google.service_accounts[email] = google.account
    settings = {
        "server": {"servers": ["gmail"]},
        "google": {"service_account_file": str(key_file), "subject": google.account, "api_endpoint": google.url},
    }
    async with connect(tmp_path, settings) as client:
        data = ok(await client.call_tool("gmail_search", {}))
    assert data["messages"][0]["subject"] == "For the delegate"
    [grant] = [r for r in google.token_requests if r["grant_type"].endswith("jwt-bearer")]
    assert "assertion" in grant


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "reason", "kind", "words"),
    [
        (401, None, "not_configured", "auth google"),
        (403, "accessNotConfigured", "not_configured", "Enable it"),
        (403, "forbidden", "denied_by_policy", "will not work on retry"),
        (403, "dailyLimitExceeded", "upstream_error", "tomorrow"),
        (403, "rateLimitExceeded", "upstream_error", "Retry in"),
        (404, None, "not_found", "search results"),
        (409, None, "conflict", "read it again"),
        (400, None, "invalid_arguments", "fix the arguments"),
        (429, None, "upstream_error", "Retry in"),
        (500, None, "upstream_error", "Retry in a minute"),
    ],
)
async def test_each_google_error_maps_to_a_kind_with_a_hint(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, status: int, reason: str | None, kind: str, words: str
):
    stored = gmail.add(plain())
    settings = sign_in(tmp_path, google)
    settings["google"]["retry_seconds"] = 0
    google.fail("gmail.users.messages.get", status, reason, times=50)
    async with connect(tmp_path, settings) as client:
        result = await client.call_tool("gmail_read", {"id": stored.id})
    error = failure(result)
    assert error["kind"] == kind and words in error["hint"]
    assert "Traceback" not in text_of(result)


@pytest.mark.parametrize(("status", "reason"), [(429, None), (500, None), (503, None), (403, "userRateLimitExceeded")])
async def test_transient_errors_are_retried_until_success(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, status: int, reason: str | None
):
    stored = gmail.add(plain(body="made it"))
    google.fail("gmail.users.messages.get", status, reason, times=2)
    async with connect(tmp_path, sign_in(tmp_path, google)) as client:
        data = ok(await client.call_tool("gmail_read", {"id": stored.id}))
    assert data["text"] == "made it" and google.calls.count("gmail.users.messages.get") == 3


async def test_a_retry_after_longer_than_the_budget_is_not_waited_for(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    stored = gmail.add(plain())
    google.fail("gmail.users.messages.get", 429, times=1, retry_after=120)
    async with connect(tmp_path, sign_in(tmp_path, google)) as client:
        error = failure(await client.call_tool("gmail_read", {"id": stored.id}))
    assert error["retry_after_seconds"] == 120 and "120 seconds" in error["hint"]


async def test_secrets_echoed_by_google_never_reach_the_result(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    stored = gmail.add(plain())
    settings = sign_in(tmp_path, google)
    access = token_data(tmp_path)["token"]
    google.fail("gmail.users.messages.get", 400, times=1, message=f"bad request for token {access}")
    async with connect(tmp_path, settings) as client:
        result = await client.call_tool("gmail_read", {"id": stored.id})
    assert failure(result)["kind"] == "invalid_arguments"
    assert access not in text_of(result) and "[redacted]" in text_of(result)


def test_backoff_grows_with_jitter_and_honours_retry_after():
    from mcp_tools.servers.google.client import MAX_DELAY, backoff_delay

    first = [backoff_delay(0) for _ in range(50)]
    later = [backoff_delay(4) for _ in range(50)]
    assert all(0.25 <= d <= 0.5 for d in first) and len(set(first)) > 1
    assert all(d <= MAX_DELAY for d in later) and min(later) > max(first)
    assert backoff_delay(0, retry_after=7) == 7


# --- signing in ----------------------------------------------------------------------------------


def _config_file(tmp_path: Path, google: FakeGoogle, extra: str = "") -> tuple[Path, Path]:
    client_id, _ = google.add_client()
    secrets_file = tmp_path / "client_secret.json"
    secrets_file.write_text(json.dumps(google.client_secrets(client_id)))
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nservers = ["gmail"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[google]\nclient_secrets = "{secrets_file}"\napi_endpoint = "{google.url}"\n{extra}'
    )
    return config, secrets_file


def _browser(url: str) -> None:
    """A browser that agrees on the consent screen: follows the redirect to the loopback."""
    with urllib.request.urlopen(url, timeout=10) as response:
        assert b"Signed in to Google" in response.read()


def test_the_oauth_flow_end_to_end_with_pkce_and_a_loopback_redirect(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, capsys: pytest.CaptureFixture[str]
):
    from mcp_tools.cli.google import auth_google
    from mcp_tools.core.config import load_config

    config_file, secrets_file = _config_file(tmp_path, google)
    said: list[str] = []
    code = auth_google(
        load_config(config_file, {}), argparse.Namespace(no_browser=False), open_url=_browser, say=said.append
    )
    assert code == 0, capsys.readouterr().err
    data = token_data(tmp_path)
    assert data["account"] == google.account and data["refresh_token"] in google.refresh_tokens
    assert data["scopes"] == sorted(
        [scopes.GMAIL_COMPOSE, scopes.GMAIL_MODIFY, scopes.GMAIL_READONLY, scopes.GMAIL_SEND]
    )
    assert not (tmp_path / "state" / "google" / "token.json").exists()  # in the state store, not a file
    [exchange] = [r for r in google.token_requests if r["grant_type"] == "authorization_code"]
    assert exchange["code_verifier"] and exchange["redirect_uri"].startswith("http://127.0.0.1:")
    client_secret = json.loads(secrets_file.read_text())["installed"]["client_secret"]
    for line in said:
        assert data["token"] not in line and data["refresh_token"] not in line and client_secret not in line
    assert any(line.startswith("Signed in as me@example.com") for line in said)


def test_read_only_asks_for_the_read_scope_only_and_no_browser_takes_the_pasted_address(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    from mcp_tools.cli.google import auth_google
    from mcp_tools.core.config import load_config

    config_file, _ = _config_file(tmp_path, google, "[policy]\nread_only = true\n")
    printed: list[str] = []

    def paste(prompt: str) -> str:
        url = next(line for line in printed[-1].splitlines() if line.startswith("http"))
        opener = urllib.request.build_opener(NoRedirect())
        try:
            opener.open(url, timeout=10)
        except urllib.error.HTTPError as redirect:
            return redirect.headers["Location"]
        raise AssertionError("the consent screen did not redirect")

    code = auth_google(
        load_config(config_file, {}), argparse.Namespace(no_browser=True), read_line=paste, say=printed.append
    )
    assert code == 0
    assert token_data(tmp_path)["scopes"] == [scopes.GMAIL_READONLY]
    assert "scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fgmail.readonly&" in printed[1]
    assert "access_type=offline" in printed[1] and "code_challenge_method=S256" in printed[1]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_a_pasted_address_with_another_state_is_refused(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    from mcp_tools.cli.google import auth_google
    from mcp_tools.core.config import load_config

    config_file, _ = _config_file(tmp_path, google)
    code = auth_google(
        load_config(config_file, {}),
        argparse.Namespace(no_browser=True),
        read_line=lambda prompt: "http://127.0.0.1:1/?state=forged&code=4/abc",
        say=lambda text: None,
    )
    assert code == 1 and not (tmp_path / "state" / "google" / "token.json").exists()
    assert not stored_accounts(tmp_path)
    assert not any(r.get("grant_type") == "authorization_code" for r in google.token_requests)


def test_cli_has_auth_google_with_no_browser():
    args = build_parser([]).parse_args(["auth", "google", "--no-browser"])
    assert args.no_browser is True and args.handler.__name__ == "cmd_auth_google"


# --- doctor, start-up, set-up --------------------------------------------------------------------


def test_doctor_shows_account_scopes_expiry_and_what_is_missing(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, capsys: pytest.CaptureFixture[str]
):
    settings = sign_in(tmp_path, google, granted=[scopes.GMAIL_READONLY])
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\nservers = ["gmail"]\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\n'
    )
    assert main(["--config", str(config), "doctor"]) == 0
    out = capsys.readouterr().out
    assert "gmail     on  (4 tools)" in out  # the core tier; the rest is a [server] tools entry away
    assert "signed in as me@example.com" in out and "granted: gmail.readonly" in out
    assert "access token expires: " in out and "min left" in out
    assert "missing for gmail.send: gmail.send, gmail.compose" in out or "missing for gmail.send: gmail." in out
    assert "missing for gmail.trash: gmail.modify" in out
    assert token_data(tmp_path)["refresh_token"] not in out


def test_gmail_is_off_with_the_next_step_until_signed_in(tmp_path: Path):
    from mcp_tools.composition.app import build_app

    app = build_app(make_config(tmp_path, {}))
    [status] = [s for s in app.statuses if s.name == "gmail"]
    assert not status.enabled and "[google] client_secrets" in (status.reason or "")
    (tmp_path / "cs.json").write_text("{}")
    app = build_app(make_config(tmp_path, {"google": {"client_secrets": str(tmp_path / "cs.json")}}))
    [status] = [s for s in app.statuses if s.name == "gmail"]
    assert not status.enabled and "mcp-tools auth google" in (status.reason or "")


def test_the_google_libraries_load_only_when_a_tool_runs(tmp_path: Path):
    code = (
        "import sys; from mcp_tools.servers import load_namespace; load_namespace('gmail');"
        "import mcp_tools.servers.google.config, mcp_tools.servers.google.scopes;"
        "names = ('googleapiclient', 'google.auth', 'google_auth_oauthlib', 'httplib2');"
        "heavy = [m for m in names if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.strip() == "[]"


def test_narrowest_scopes_per_tool():
    assert scopes.requested_scopes(["gmail.search", "gmail.read", "gmail.attachment"]) == [scopes.GMAIL_READONLY]
    assert scopes.GMAIL_MODIFY not in scopes.requested_scopes(["gmail.search", "gmail.draft", "gmail.send"])
    assert scopes.missing_scopes("gmail.read", ["https://mail.google.com/"]) == []
    assert scopes.missing_scopes("gmail.read", [scopes.GMAIL_MODIFY]) == []
    assert scopes.missing_scopes("gmail.labels", [scopes.GMAIL_READONLY]) == [scopes.GMAIL_MODIFY]


async def test_signing_in_again_is_picked_up_without_a_restart(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    gmail.add(plain())
    settings = sign_in(tmp_path, google, expires_in=0)
    google.revoke_refresh_tokens()
    async with connect(tmp_path, settings) as client:
        assert failure(await client.call_tool("gmail_search", {}))["kind"] == "not_configured"
        data = token_data(tmp_path)
        data["token"], data["refresh_token"] = google.issue(sorted(data["scopes"]))
        put_token(tmp_path, data)  # what `mcp-tools auth google` leaves behind
        ok(await client.call_tool("gmail_search", {}))


def test_the_loopback_ignores_other_requests_until_the_answer_comes(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    from mcp_tools.cli.google import auth_google
    from mcp_tools.core.config import load_config

    config_file, _ = _config_file(tmp_path, google)

    def browser(url: str) -> None:
        from urllib.parse import parse_qs, urlsplit

        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        try:
            urllib.request.urlopen(redirect + "favicon.ico", timeout=10)
        except urllib.error.HTTPError as error:
            assert error.code == 404
        _browser(url)

    code = auth_google(
        load_config(config_file, {}), argparse.Namespace(no_browser=False), open_url=browser, say=lambda text: None
    )
    assert code == 0 and token_data(tmp_path)["account"] == google.account


def test_an_access_level_widens_the_scopes_asked_and_named(monkeypatch: pytest.MonkeyPatch):
    from mcp_tools.core.tooling import UpstreamScopes

    declared = UpstreamScopes((scopes.DRIVE_FILE,), ("drive.files.get",), wider={"read": (scopes.DRIVE_READONLY,)})
    monkeypatch.setitem(scopes.declared(), "demo.read", declared)  # as a tool's ToolSpec(scopes=...) says
    assert scopes.requested_scopes(["demo.read"]) == [scopes.DRIVE_FILE]
    assert scopes.requested_scopes(["demo.read"], {"demo": "read"}) == [scopes.DRIVE_READONLY]
    assert scopes.requested_scopes(["demo.read"], {"demo": "all"}) == [scopes.DRIVE_FILE]  # no wider entry
    assert scopes.missing_scopes("demo.read", [], "read") == [scopes.DRIVE_READONLY]
    assert scopes.missing_scopes("demo.read", [scopes.DRIVE]) == []  # drive covers files.get at Google
    assert scopes.access_levels({"gmail": {"access": "all"}})["gmail"] == "all"
    assert scopes.access_levels({"gmail": {"access": "everything"}})["gmail"] == "app"  # the model refuses it


def test_apis_with_a_service_path_keep_it_behind_a_configured_endpoint():
    from mcp_tools.servers.google.client import GoogleClient
    from mcp_tools.servers.google.config import GoogleConfig

    client = GoogleClient(None, GoogleConfig(api_endpoint="http://127.0.0.1:8080"))  # type: ignore[arg-type]
    assert client.endpoint("gmail", "v1") == "http://127.0.0.1:8080/"
    assert client.endpoint("drive", "v3") == "http://127.0.0.1:8080/drive/v3/"
    assert client.endpoint("calendar", "v3", "batchPath") == "http://127.0.0.1:8080/batch/calendar/v3"


def test_upload_urls_keep_the_configured_scheme(tmp_path: Path):
    from types import SimpleNamespace

    from mcp_tools.servers.google.client import GoogleClient
    from mcp_tools.servers.google.config import GoogleConfig

    client = GoogleClient(None, GoogleConfig(api_endpoint="http://127.0.0.1:8080"))  # type: ignore[arg-type]
    request = SimpleNamespace(uri="https://127.0.0.1:8080/upload/gmail/v1/users/me/messages/send?uploadType=multipart")
    assert (
        client.fix_upload(request).uri
        == "http://127.0.0.1:8080/upload/gmail/v1/users/me/messages/send?uploadType=multipart"
    )
    elsewhere = SimpleNamespace(uri="https://gmail.googleapis.com/upload/x")
    assert client.fix_upload(elsewhere).uri == "https://gmail.googleapis.com/upload/x"
    with pytest.raises(ValueError, match="https"):
        GoogleConfig(api_endpoint="http://proxy.example.org/")


def test_auth_google_without_a_client_file_says_what_to_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    config = tmp_path / "config.toml"
    config.write_text(f'[server]\nstate_dir = "{tmp_path / "state"}"\n')
    assert main(["--config", str(config), "auth", "google", "--no-browser"]) == 1
    assert "set [google] client_secrets" in capsys.readouterr().err
    assert not (tmp_path / "state" / "google" / "token.json").exists()


async def test_gmail_over_stdio_in_a_real_server_process(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    from mcp import Client

    from tests.processes import cli_in_process, stdio_params

    gmail.add(plain(subject="Over stdio"))
    settings = sign_in(tmp_path, google, expires_in=30)
    before = token_data(tmp_path)["token"]
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nservers = ["gmail"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\napi_endpoint = "{google.url}"\n'
    )
    async with Client(stdio_params(config)) as client:
        data = ok(await client.call_tool("gmail_search", {"query": "stdio"}))
    assert data["messages"][0]["subject"] == "Over stdio"
    assert token_data(tmp_path)["token"] not in (before, None)  # refreshed in the server process, and stored
    audit = cli_in_process(config, "audit", "--json").stdout
    assert '"gmail.search"' in audit and token_data(tmp_path)["refresh_token"] not in audit


def test_google_namespaces_share_one_client_per_account(tmp_path: Path):
    from mcp_tools.core.tooling import Environment
    from mcp_tools.servers.google.client import shared_client
    from mcp_tools.servers.google.config import GoogleConfig
    from mcp_tools.servers.google.tokens import TokenSlot

    config = GoogleConfig(client_secrets=tmp_path / "cs.json")
    env = Environment(tmp_path / "data", tmp_path / "state")
    first = shared_client(config, TokenSlot(env, "default"), [scopes.GMAIL_READONLY])
    second = shared_client(config, TokenSlot(env, "default"), [scopes.GMAIL_SEND])
    other = shared_client(config, TokenSlot(env, "work"), [scopes.GMAIL_SEND])
    someone_else = shared_client(config, TokenSlot(env, "default", "https://idp.example|bob"), [scopes.GMAIL_SEND])
    assert someone_else is not first and someone_else is not other
    assert first is second and other is not first
    assert first.account.scopes == sorted([scopes.GMAIL_READONLY, scopes.GMAIL_SEND])


def test_google_namespaces_left_alone_are_off_and_not_even_imported(tmp_path: Path):
    """drive, docs, sheets and tasks run only when asked for; until then they cost no start-up time."""
    code = (
        "import sys, json; from mcp_tools.composition.app import build_app; from tests.harness import make_config;"
        f"app = build_app(make_config(__import__('pathlib').Path({str(tmp_path)!r}), {{'docs': {{}}}}));"
        "names = ('drive', 'docs', 'sheets', 'tasks');"
        "print(json.dumps({'loaded': [n for n in names if 'mcp_tools.servers.' + n in sys.modules],"
        " 'reasons': {s.name: s.reason for s in app.statuses if s.name in names}}))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    found = json.loads(out.stdout)
    assert found["loaded"] == ["docs"]  # asked for by its section; the others untouched
    assert found["reasons"]["drive"] == "add a [drive] section (or name drive in [server] namespaces) to turn it on"
    assert "[google] client_secrets" in found["reasons"]["docs"]


@pytest.mark.parametrize("dots", ["..", "."])
async def test_an_id_of_dots_never_reaches_another_resource(
    tmp_path: Path, google: FakeGoogle, dots: str, drive: Any, docs: Any, sheets: Any, tasks: Any
):
    """googleapiclient leaves dots in path ids alone, and servers resolve dot segments: a task id
    of ".." would make tasks.delete's DELETE name the whole list. Refused before any request."""
    work = tasks.add_list("Work")
    tasks.add("Only task", list_id=work.id)
    granted = [scopes.DRIVE_FILE, scopes.TASKS]
    settings = sign_in(tmp_path, google, granted, servers=["drive", "docs", "sheets", "tasks"])
    calls = {
        "tasks_delete": {"id": dots, "list": work.id},
        "tasks_get": {"id": dots, "list": work.id},
        "tasks_list": {"list": dots},
        "drive_read": {"id": dots},
        "drive_delete": {"id": dots},
        "docs_read": {"id": dots},
        "sheets_read": {"id": dots, "range": "A1"},
    }
    async with connect(tmp_path, settings) as client:
        before = len(google.calls)
        for name, arguments in calls.items():
            error = failure(await client.call_tool(name, arguments))
            assert error["kind"] in ("invalid_arguments", "not_found"), (name, error)
        assert [call for call in google.calls[before:] if not call.startswith("tasks.tasklists.")] == []
    assert work.id in tasks.lists and tasks.titles(work.id) == ["Only task"]


def test_requests_with_dot_segments_are_refused_before_sending():
    from googleapiclient.discovery import build

    from mcp_tools.core.tooling import ToolFailure
    from mcp_tools.servers.google.client import checked_path

    tasks = build("tasks", "v1", static_discovery=True, developerKey="k")
    assert checked_path(tasks.tasks().delete(tasklist="L1", task="t.1")) is not None  # dots inside an id are fine
    assert "%2F" in checked_path(tasks.tasks().get(tasklist="L1", task="../L2")).uri  # slashes are encoded
    for dots in ("..", "."):
        with pytest.raises(ToolFailure) as refused:
            checked_path(tasks.tasks().delete(tasklist="L1", task=dots))
        assert refused.value.kind == "invalid_arguments"
