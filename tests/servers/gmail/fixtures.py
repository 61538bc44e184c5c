"""Mail samples and an account signed in to the fake Google, shared by the gmail tests."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from mcp_tools.servers.google import scopes
from tests.servers.fake_google import FakeGmail, FakeGoogle

ALL_SCOPES = [scopes.GMAIL_READONLY, scopes.GMAIL_COMPOSE, scopes.GMAIL_SEND, scopes.GMAIL_MODIFY]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def sign_in(
    tmp_path: Path,
    google: FakeGoogle,
    granted: list[str] | None = None,
    *,
    expires_in: int = 3600,
    gmail: dict[str, Any] | None = None,
    servers: list[str] | None = None,
) -> dict[str, Any]:
    """Settings for a config whose [google] account holds a token from the fake."""
    client_id, _ = google.add_client()
    secrets_file = tmp_path / "client_secret.json"
    secrets_file.write_text(json.dumps(google.client_secrets(client_id)))
    access, refresh = google.issue(granted if granted is not None else ALL_SCOPES, seconds=max(expires_in, 1))
    token_file = tmp_path / "state" / "google" / "token.json"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    expiry = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=expires_in)
    token_file.write_text(
        json.dumps(
            {
                "token": access,
                "refresh_token": refresh,
                "token_uri": google.url + "token",
                "client_id": client_id,
                "scopes": sorted(granted if granted is not None else ALL_SCOPES),
                "expiry": expiry.isoformat(),
                "account": google.account,
            }
        )
    )
    os.chmod(token_file, 0o600)
    return {
        "server": {"servers": servers or ["gmail", "files"]},
        "google": {"client_secrets": str(secrets_file), "api_endpoint": google.url, "retry_seconds": 3},
        "gmail": gmail or {},
    }


def plain(
    subject: str = "Hello",
    body: str = "Just a short note.",
    sender: str = "Ann <ann@example.org>",
    to: str = "me@example.com",
    message_id: str = "<m1@example.org>",
    extra: str = "",
) -> str:
    return (
        f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\nDate: Mon, 3 Nov 2025 09:00:00 +0000\r\n"
        f"Message-ID: {message_id}\r\n{extra}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"\r\n{body}\r\n"
    )


def html_only(subject: str = "Newsletter") -> str:
    return (
        f"From: news@shop.example\r\nTo: me@example.com\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\n"
        "Message-ID: <h1@shop.example>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        "<html><head><style>p{color:red}</style></head><body><h1>Autumn sale</h1>"
        '<p>Everything <b>half</b> price.</p><p><a href="https://shop.example/sale">Open the sale</a></p>'
        "</body></html>\r\n"
    )


def stub_and_html() -> str:
    """A plain part that only says 'view in browser', beside the real HTML."""
    return (
        "From: news@shop.example\r\nTo: me@example.com\r\nSubject: Weekly\r\nMIME-Version: 1.0\r\n"
        'Message-ID: <s1@shop.example>\r\nContent-Type: multipart/alternative; boundary="alt"\r\n\r\n'
        "--alt\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nView this email in your browser.\r\n"
        "--alt\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>This week: the river cleanup is on "
        'Saturday at nine. Bring gloves; we provide bags and coffee.</p><p><a href="https://club.example/rsvp">'
        "RSVP</a> before Friday so we know how many to expect. Parking is free at the north entrance.</p>\r\n"
        "--alt--\r\n"
    )


def nested_with_attachments() -> bytes:
    """multipart/mixed > (multipart/alternative > plain, related > html + image), pdf, csv."""
    import base64

    png = base64.encodebytes(PNG).decode()
    return (
        "From: Bob <bob@example.org>\r\nTo: me@example.com\r\nSubject: Q3 report\r\nMIME-Version: 1.0\r\n"
        'Message-ID: <n1@example.org>\r\nContent-Type: multipart/mixed; boundary="mix"\r\n\r\n'
        '--mix\r\nContent-Type: multipart/alternative; boundary="alt"\r\n\r\n'
        "--alt\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe Q3 numbers are attached. Revenue is up 12%.\r\n"
        '--alt\r\nContent-Type: multipart/related; boundary="rel"\r\n\r\n'
        "--rel\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>The Q3 numbers are attached.</p>\r\n"
        "--rel\r\nContent-Type: image/png\r\nContent-ID: <logo>\r\n"
        "Content-Transfer-Encoding: base64\r\n\r\n"
        f"{png}\r\n--rel--\r\n--alt--\r\n"
        '--mix\r\nContent-Type: image/png; name="chart.png"\r\n'
        'Content-Disposition: attachment; filename="chart.png"\r\n'
        f"Content-Transfer-Encoding: base64\r\n\r\n{png}\r\n"
        '--mix\r\nContent-Type: text/csv; charset=iso-8859-1; name="q3.csv"\r\n'
        'Content-Disposition: attachment; filename="q3.csv"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
        "region,revenue\r\nM=FCnchen,120\r\n--mix--\r\n"
    ).encode()


def latin1() -> bytes:
    return (
        b"From: =?iso-8859-1?q?J=FCrgen?= <j@example.de>\r\nTo: me@example.com\r\n"
        b"Subject: =?iso-8859-1?q?Gr=FC=DFe?=\r\n"
        b"Message-ID: <l1@example.de>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=iso-8859-1\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n\r\n"
    ) + "Schöne Grüße aus München, Straße 5.\r\n".encode("iso-8859-1")


def shift_jis() -> bytes:
    return (
        (
            b"From: taro@example.jp\r\nTo: me@example.com\r\nSubject: hello\r\nMessage-ID: <j1@example.jp>\r\n"
            b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=shift_jis\r\n"
            b"Content-Transfer-Encoding: 8bit\r\n\r\n"
        )
        + "こんにちは、会議は明日です。".encode("shift_jis")
        + b"\r\n"
    )


def big(size: int = 2 * 1024 * 1024) -> tuple[bytes, str]:
    """A text mail of about `size` bytes whose body ends with a marker."""
    line = "The quick brown fox jumps over the lazy dog 0123456789.\n"
    body = line * (size // len(line)) + "THE-END-MARKER\n"
    head = (
        "From: log@example.org\r\nTo: me@example.com\r\nSubject: Big log\r\nMessage-ID: <b1@example.org>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
    )
    return head.encode() + body.encode(), body.strip()


__all__ = ["ALL_SCOPES", "FakeGmail", "FakeGoogle", "sign_in"]
