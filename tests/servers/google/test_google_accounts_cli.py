"""`mcp-tools auth google --account / --import / --list / --remove`, against the fake Google."""

from __future__ import annotations

import argparse
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.cli.google import auth_google
from mcp_tools.cli.main import build_parser
from mcp_tools.core.config import load_config
from mcp_tools.servers.google import scopes
from mcp_tools.state.sealed import is_sealed
from mcp_tools.state.sqlite import PolicyStore
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import ALL_SCOPES, sign_in
from tests.servers.google_accounts_fixtures import WORK, store_token, stored_accounts, stored_token

SECRET = "a-shared-state-secret-of-enough-length-0123456789"


def _config(tmp_path: Path, google: FakeGoogle, extra: str = "") -> Path:
    client_id, _ = google.add_client()
    secrets_file = tmp_path / "client_secret.json"
    secrets_file.write_text(json.dumps(google.client_secrets(client_id)))
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nservers = ["gmail"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[google]\nclient_secrets = "{secrets_file}"\napi_endpoint = "{google.url}"\n{extra}'
    )
    return config


def _run(config: Path, said: list[str], **options: Any) -> int:
    args = argparse.Namespace(no_browser=False, account=None, import_file=None, list=False, remove=None)
    for key, value in options.items():
        setattr(args, key, value)
    return auth_google(load_config(config, {}), args, open_url=_browser, say=said.append)


def _browser(url: str) -> None:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert b"Signed in to Google" in response.read()


def _work_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "google" / "accounts" / "work.json"


def test_the_parser_takes_the_account_options():
    args = build_parser([]).parse_args(["auth", "google", "--account", "work", "--import", "user.json"])
    assert args.account == "work" and args.import_file == Path("user.json")
    assert build_parser([]).parse_args(["auth", "google", "--list"]).list is True
    assert build_parser([]).parse_args(["auth", "google", "--remove", "work"]).remove == "work"


def test_signing_in_a_second_account_keeps_the_first(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    work = google.add_account(WORK)
    FakeGmail(work)
    config = _config(tmp_path, google)
    said: list[str] = []
    assert _run(config, said) == 0
    google.signed_in_as = WORK  # the browser's Google session is now the work account
    assert _run(config, said, account="work") == 0
    default = stored_token(tmp_path)
    mine = stored_token(tmp_path, "work")
    assert default["account"] == "me@example.com" and mine["account"] == WORK
    assert google.refresh_accounts[mine["refresh_token"]] == WORK
    assert stored_accounts(tmp_path) == ["default", "work"] and not _work_file(tmp_path).exists()
    assert any(line.startswith(f"Signed in (work) as {WORK}") for line in said)
    for line in said:
        assert mine["refresh_token"] not in line and mine["token"] not in line


def test_a_read_only_account_is_asked_for_the_read_scope_only(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    config = _config(tmp_path, google, "[google.accounts.work]\nread_only = true\n")
    said: list[str] = []
    assert _run(config, said, account="work") == 0
    assert stored_token(tmp_path, "work")["scopes"] == [scopes.GMAIL_READONLY]
    assert _run(config, said) == 0
    assert len(stored_token(tmp_path)["scopes"]) == 4


def test_a_bad_label_is_refused(tmp_path: Path, google: FakeGoogle, capsys: pytest.CaptureFixture[str]):
    config = _config(tmp_path, google)
    assert _run(config, [], account="../etc") == 2
    assert "cannot name an account" in capsys.readouterr().err
    assert _run(config, [], account="all") == 2


def _authorized_user(tmp_path: Path, google: FakeGoogle, **changes: Any) -> Path:
    client_id, client_secret = google.add_client()
    _, refresh = google.issue(ALL_SCOPES)
    data = {
        "type": "authorized_user",
        "client_id": client_id,
        "client_secret": client_secret,
        "refresh_token": refresh,
        "token_uri": google.url + "token",
        **changes,
    }
    path = tmp_path / "authorized_user.json"
    path.write_text(json.dumps({key: value for key, value in data.items() if value is not None}))
    return path


def test_importing_an_authorized_user_file_seals_it_under_the_state_secret(
    tmp_path: Path, google: FakeGoogle, capsys: pytest.CaptureFixture[str]
):
    work = google.add_account(WORK)
    FakeGmail(work)
    config = _config(tmp_path, google, f'[state]\nsecret = "{SECRET}"\n')
    source = _authorized_user(tmp_path, work)
    said: list[str] = []
    assert _run(config, said, account="work", import_file=source) == 0, capsys.readouterr().err
    refresh = json.loads(source.read_text())["refresh_token"]
    store = PolicyStore(tmp_path / "state" / "policy.sqlite3")
    found = store.google_token("", "work")
    store.close()
    assert found is not None and is_sealed(json.loads(found[0])) and refresh not in found[0]
    assert stored_token(tmp_path, "work", secret=SECRET)["refresh_token"] == refresh
    for path in (tmp_path / "state").rglob("*"):  # the database and its journal hold no token in the clear
        assert not path.is_file() or refresh.encode() not in path.read_bytes(), path
    assert said == [f"Imported work ({WORK}); granted: {', '.join(scopes.short(s) for s in sorted(ALL_SCOPES))}."]
    listed: list[str] = []
    assert _run(config, listed, list=True) == 0
    assert listed[0] == f"work (default): {WORK}; refresh token works", listed


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"refresh_token": None}, "lacks refresh_token"),
        ({"type": "service_account"}, "service-account key"),
        ({"token_uri": "http://oauth.example.com/token"}, "token_uri must be an https address"),
        ({"type": "external_account"}, "has type 'external_account'"),
    ],
)
def test_an_unusable_import_file_says_what_is_wrong(
    tmp_path: Path, google: FakeGoogle, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], words: str
):
    config = _config(tmp_path, google)
    source = _authorized_user(tmp_path, google, **changes)
    assert _run(config, [], account="work", import_file=source) == 2
    assert words in capsys.readouterr().err
    assert "work" not in stored_accounts(tmp_path)


def test_an_import_whose_refresh_token_google_refuses_stores_nothing(
    tmp_path: Path, google: FakeGoogle, capsys: pytest.CaptureFixture[str]
):
    config = _config(tmp_path, google)
    source = _authorized_user(tmp_path, google)
    google.revoke_refresh_tokens()
    assert _run(config, [], account="work", import_file=source) == 1
    assert "invalid_grant: the refresh token was revoked" in capsys.readouterr().err
    assert "work" not in stored_accounts(tmp_path)
    (tmp_path / "broken.json").write_text("{not json")
    assert _run(config, [], account="work", import_file=tmp_path / "broken.json") == 2
    assert "is not JSON" in capsys.readouterr().err


def test_list_says_which_refresh_tokens_work_and_remove_revokes(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    work = google.add_account(WORK)
    config = _config(tmp_path, google)
    sign_in(tmp_path, google)
    stored = store_token(tmp_path, work, "work")
    google.revoke_refresh_tokens("me@example.com")
    said: list[str] = []
    assert _run(config, said, list=True) == 0
    assert said[0].startswith("default (default): me@example.com; refresh token refused:")
    assert "mcp-tools auth google" in said[0]
    assert said[2] == f"work: {WORK}; refresh token works"
    assert said[3].startswith("    scopes: gmail.")
    said.clear()
    assert _run(config, said, remove="work") == 0
    assert stored["refresh_token"] in google.revoked and stored_accounts(tmp_path) == ["default"]
    assert said == [f"Removed work ({WORK}); Google revoked its access."]
    assert _run(config, said, remove="work") == 2


def test_an_account_with_its_own_drive_access_is_asked_for_that_scope(tmp_path: Path, google: FakeGoogle):
    config = _config(tmp_path, google, '[google.accounts.work.drive]\naccess = "read"\n[drive]\n')
    config.write_text(config.read_text().replace('servers = ["gmail"]', 'servers = ["drive"]'))
    assert _run(config, [], account="work") == 0
    assert _run(config, []) == 0
    work = stored_token(tmp_path, "work")["scopes"]
    default = stored_token(tmp_path)["scopes"]
    assert scopes.DRIVE_READONLY in work and scopes.DRIVE_READONLY not in default
    assert default == [scopes.DRIVE_FILE]
