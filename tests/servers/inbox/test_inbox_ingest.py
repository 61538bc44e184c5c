"""The other two ways in: `POST /inbox` behind the HTTP server's bearer auth, and the CLI."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.servers.inbox.cli import EX_DATAERR, EX_NOINPUT, run_ingest
from mcp_tools.servers.inbox.service import InboxService
from mcp_tools.transports.http import build_http_app
from tests.harness import make_config
from tests.servers.inbox import fixtures as mail

pytestmark = pytest.mark.anyio
TOKEN = "webhook-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "message/rfc822"}


@pytest.fixture
async def http(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, InboxService]]:
    settings: dict[str, Any] = {
        "server": {"servers": ["inbox"]},
        "inbox": {"addresses": [mail.INBOX_ADDRESS], "max_message_bytes": 8192},
        "http": {"tokens": {"worker": TOKEN}},
    }
    app = build_app(make_config(tmp_path, settings))
    asgi = build_http_app(app, "127.0.0.1")
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        yield client, app.services["inbox"]


async def test_post_stores_then_reports_duplicate(http: tuple[httpx.AsyncClient, InboxService]) -> None:
    client, service = http
    first = await client.post("/inbox", content=mail.latin1_body(), headers=AUTH)
    assert first.status_code == 201
    assert first.json()["duplicate"] is False
    again = await client.post("/inbox", content=mail.latin1_body(), headers=AUTH)
    assert again.status_code == 200 and again.json() == {**first.json(), "duplicate": True}
    stored = service.store.get(first.json()["id"])
    assert stored is not None and stored["via"] == "http" and stored["subject"] == "Réunion à Genève"


async def test_post_without_the_token_is_refused(http: tuple[httpx.AsyncClient, InboxService]) -> None:
    client, service = http
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        response = await client.post("/inbox", content=mail.simple(), headers=headers)
        assert response.status_code == 401
    assert service.store.count() == 0


async def test_oversize_body_gets_413(http: tuple[httpx.AsyncClient, InboxService]) -> None:
    client, service = http
    big = mail.simple(body="padding line\n" * 1000)
    assert (await client.post("/inbox", content=big, headers=AUTH)).status_code == 413

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the stream itself is counted
        for _ in range(20):
            yield b"x" * 1024

    streamed = await client.post("/inbox", content=chunks(), headers=AUTH)
    assert streamed.status_code == 413
    assert service.store.count() == 0


async def test_empty_body_gets_400_forms_and_compressed_bodies_get_415(
    http: tuple[httpx.AsyncClient, InboxService],
) -> None:
    client, service = http
    assert (await client.post("/inbox", content=b"", headers=AUTH)).status_code == 400
    form = {**AUTH, "Content-Type": "application/x-www-form-urlencoded"}
    assert (await client.post("/inbox", content=b"raw=From%3A", headers=form)).status_code == 415
    gzipped = {**AUTH, "Content-Encoding": "gzip"}
    assert (await client.post("/inbox", content=b"\x1f\x8b\x08", headers=gzipped)).status_code == 415
    assert service.store.count() == 0


async def test_get_is_not_allowed(http: tuple[httpx.AsyncClient, InboxService]) -> None:
    client, _ = http
    assert (await client.get("/inbox", headers=AUTH)).status_code == 405


async def test_malformed_mail_is_stored_with_warnings(http: tuple[httpx.AsyncClient, InboxService]) -> None:
    client, service = http
    response = await client.post("/inbox", content=mail.malformed_headers(), headers=AUTH)
    assert response.status_code == 201 and response.json()["warnings"]
    assert service.store.count() == 1


async def test_cli_ingest_from_file_and_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = mail.make_service(tmp_path)
    eml = tmp_path / "mail.eml"
    eml.write_bytes(mail.shift_jis_body())
    assert await run_ingest(service, argparse.Namespace(file=str(eml))) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["duplicate"] is False

    fake_stdin = io.TextIOWrapper(io.BytesIO(mail.shift_jis_body()))
    monkeypatch.setattr(sys, "stdin", fake_stdin)
    assert await run_ingest(service, argparse.Namespace(file="-")) == 0
    again = json.loads(capsys.readouterr().out)
    assert again == {**printed, "duplicate": True}
    stored = service.store.get(printed["id"])
    assert stored is not None and stored["subject"] == "議事録" and stored["via"] == "cli"


async def test_cli_ingest_failures_use_mail_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = mail.make_service(tmp_path, max_message_bytes=2048)
    assert await run_ingest(service, argparse.Namespace(file=str(tmp_path / "missing.eml"))) == EX_NOINPUT
    big = tmp_path / "big.eml"
    big.write_bytes(mail.simple(body="y" * 5000))
    assert await run_ingest(service, argparse.Namespace(file=str(big))) == EX_DATAERR
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert await run_ingest(service, argparse.Namespace(file="-")) == EX_DATAERR
    assert "empty" in capsys.readouterr().err
    assert service.store.count() == 0


def test_mcp_tools_inbox_ingest_command_end_to_end(tmp_path: Path) -> None:
    import subprocess

    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[inbox]\naddresses = ["{mail.INBOX_ADDRESS}"]\n'
    )
    command = [sys.executable, "-m", "mcp_tools.cli", "--config", str(config), "inbox", "ingest", "-"]
    done = subprocess.run(command, input=mail.nested_forward(), capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    stored_id = json.loads(done.stdout)["id"]
    service = mail.make_service(tmp_path)
    stored = service.store.get(stored_id)
    assert stored is not None and stored["subject"] == "Fwd: Fwd: Lease renewal"
