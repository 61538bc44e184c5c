"""Audit rows name the Google account a call acted as, on SQLite and PostgreSQL, and hold no
token; `mcp-tools audit` shows it beside the tool, as a policy rule names it (`gmail.search@work`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import build_app
from tests.harness import connect, failure, make_config, ok
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain
from tests.servers.google_accounts_fixtures import WORK, two_accounts

pytestmark = pytest.mark.anyio


@pytest.fixture
def work(google: FakeGoogle) -> FakeGoogle:
    return google.add_account(WORK)


@pytest.fixture(params=["sqlite", "postgresql"])
def state(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "sqlite":
        return {}
    secret = "a-state-secret-of-at-least-32-bytes-0123456789"
    return {"state": {"url": request.getfixturevalue("postgres_url"), "secret": secret}}


async def test_audit_rows_name_the_account_that_acted(
    tmp_path: Path,
    google: FakeGoogle,
    work: FakeGoogle,
    state: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    FakeGmail(google).add(plain(subject="home"))
    FakeGmail(work).add(plain(subject="office", to=WORK))
    app = build_app(make_config(tmp_path, two_accounts(tmp_path, google, work, **state)))
    async with connect(tmp_path, app=app) as client:
        ok(await client.call_tool("gmail_search", {}))
        ok(await client.call_tool("gmail_search", {"account": WORK}))  # named by its address: the row says the label
        ok(await client.call_tool("gmail_search", {"account": "all"}))
        assert failure(await client.call_tool("gmail_search", {"account": "play"}))["kind"] == "invalid_arguments"
        ok(await client.call_tool("files_list", {}))
        rows = app.store.tail(5)
        from mcp_tools.cli.approvals import cmd_audit

        monkeypatch.setattr("mcp_tools.cli.approvals.open_store", lambda args: (app.store, None))
        capsys.readouterr()
        assert cmd_audit(argparse.Namespace(tail=5, json=False)) == 0
        shown = capsys.readouterr().out.splitlines()
        assert cmd_audit(argparse.Namespace(tail=1, json=True)) == 0
        as_json = json.loads(capsys.readouterr().out)
    assert [(row.tool, row.account) for row in rows] == [
        ("gmail.search", "default"),
        ("gmail.search", "work"),
        ("gmail.search", "default, work"),
        ("gmail.search", None),  # an unknown account acted as nobody
        ("files.list", None),  # a tool without accounts
    ]
    assert [row.as_dict()["account"] for row in rows][:2] == ["default", "work"]
    assert " gmail.search@default " in shown[0] and " gmail.search@work " in shown[1]
    assert " gmail.search@default, work " in shown[2] and " gmail.search " in shown[3]
    assert as_json["tool"] == "files.list" and as_json["account"] is None
    # the row names the label, never the address nor any credential
    written = json.dumps([row.as_dict() for row in rows])
    for token_file in (tmp_path / "state" / "google").rglob("*.json"):
        stored = json.loads(token_file.read_text())
        for secret in (stored["token"], stored["refresh_token"]):
            assert secret not in written
    assert "corp.example" not in json.dumps([row.account for row in rows])
