"""Real SMTP over 127.0.0.1: smtplib into the aiosmtpd receiver."""

from __future__ import annotations

import argparse
import smtplib
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from mcp_tools.servers.inbox.cli import EX_CONFIG, run_smtp
from mcp_tools.servers.inbox.config import parse_listen
from mcp_tools.servers.inbox.service import InboxService
from mcp_tools.servers.inbox.smtp import (
    MAX_RECIPIENTS,
    InboxSMTPHandler,
    greeting_hostname,
    smtp_parameters,
    start_smtp_server,
)
from mcp_tools.servers.inbox.store import SearchFilters
from tests.servers import charset_mail
from tests.servers.inbox import fixtures as mail


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def receiver(service: InboxService) -> Iterator[int]:
    from aiosmtpd.controller import Controller

    port = free_port()
    controller = Controller(
        InboxSMTPHandler(service),
        hostname="127.0.0.1",
        port=port,
        ready_timeout=10,
        server_hostname=greeting_hostname(service),
        **smtp_parameters(service),
    )
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


@contextmanager
def smtp_client(port: int) -> Iterator[smtplib.SMTP]:
    client = smtplib.SMTP("127.0.0.1", port, timeout=10)
    try:
        yield client
    finally:
        client.close()


def send(port: int, raw: bytes, recipients: list[str]) -> tuple[int, bytes]:
    """MAIL, RCPT for each recipient, DATA; returns the DATA reply."""
    with smtp_client(port) as client:
        client.ehlo("sender.example")
        client.mail("forwarder@example.org")
        for recipient in recipients:
            client.rcpt(recipient)
        return client.data(raw)


def test_mail_for_the_inbox_address_is_stored(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    with receiver(service) as port:
        code, reply = send(port, mail.multipart_alternative(), [mail.INBOX_ADDRESS])
    assert code == 250 and b"Stored as" in reply
    stored_id = reply.decode().split("Stored as ")[1].split()[0]
    stored = service.store.get(stored_id)
    assert stored is not None and stored["subject"] == "Quarterly report ready" and stored["via"] == "smtp"


def test_whole_corpus_arrives_intact_over_smtp(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    with receiver(service) as port, smtp_client(port) as client:
        for raw in mail.corpus().values():
            refused = client.sendmail("forwarder@example.org", [mail.INBOX_ADDRESS], raw)
            assert refused == {}
    assert service.store.count() == len(mail.corpus())
    rows, _ = service.store.search(SearchFilters("geneve"), 5, None)
    stored = service.store.get(rows[0]["id"])
    assert stored is not None and stored["body"] == "Le café crème est prêt à Genève."


@pytest.mark.parametrize("name", sorted(charset_mail.SAMPLES))
def test_charset_labels_are_read_as_browsers_read_them(tmp_path: Path, name: str) -> None:
    """Subject, body and attachment name of real client mail, over SMTP, as its sender wrote them."""
    sample = charset_mail.SAMPLES[name]()
    service = mail.make_service(tmp_path)
    with receiver(service) as port:
        code, reply = send(port, sample.raw, [mail.INBOX_ADDRESS])
    assert code == 250
    stored = service.store.get(reply.decode().split("Stored as ")[1].split()[0])
    assert stored is not None
    assert stored["subject"] == sample.subject and stored["body"] == sample.body
    assert not any("\x80" <= char <= "\x9f" for char in stored["subject"] + stored["body"])
    if sample.attachment:
        assert [item["filename"] for item in stored["attachments"]] == [sample.attachment]
    if name == "outlook":
        assert stored["sender"] == "Ren\u00e9 M\u00fcller <rene@example.org>"
    if name == "raw-8bit-headers":
        assert stored["sender"] == "Doe, Ren\u00e9 <rene@example.org>"


def test_relaying_is_refused_with_550(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    with receiver(service) as port, smtp_client(port) as client:
        client.ehlo("attacker.example")
        client.mail("spammer@example.net")
        for target in ("victim@gmail.example", "inbox@assistant.example.evil"):
            code, reply = client.rcpt(target)
            assert code == 550 and b"Relaying denied" in reply
        code, _ = client.rcpt("inbox@assistant.example@evil.example")
        assert code in (550, 553)
        with pytest.raises(smtplib.SMTPDataError) as refused:  # no accepted recipient, so no DATA
            client.data(mail.simple())
        assert refused.value.smtp_code == 503
    assert service.store.count() == 0


def test_mixed_recipients_deliver_only_to_the_inbox(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    with receiver(service) as port, smtp_client(port) as client:
        refused = client.sendmail(
            "forwarder@example.org", ["someone@else.example", "Inbox@Assistant.Example"], mail.simple()
        )
    assert set(refused) == {"someone@else.example"} and refused["someone@else.example"][0] == 550
    assert service.store.count() == 1


def test_no_configured_address_means_nothing_is_accepted(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path, addresses=[])
    with receiver(service) as port, smtp_client(port) as client, pytest.raises(smtplib.SMTPRecipientsRefused):
        client.sendmail("a@example.org", [mail.INBOX_ADDRESS], mail.simple())
    assert service.store.count() == 0


def test_oversize_mail_is_refused_with_552(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path, max_message_bytes=4096)
    big = mail.simple(body="a line of seventy characters or so to pad the message out a bit\n" * 120)
    with receiver(service) as port:
        code, reply = send(port, big, [mail.INBOX_ADDRESS])
        assert code == 552, reply
        with smtp_client(port) as client:
            client.ehlo("sender.example")
            assert client.has_extn("size") and int(client.esmtp_features["size"]) == 4096
            code, _ = client.mail("a@example.org", options=["SIZE=999999"])
            assert code == 552
        code, _ = send(port, mail.simple(body="small"), [mail.INBOX_ADDRESS])
        assert code == 250
    assert service.store.count() == 1


def test_duplicates_over_smtp_are_stored_once(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    with receiver(service) as port:
        first = send(port, mail.with_attachments(), [mail.INBOX_ADDRESS])
        second = send(port, mail.with_attachments(), [mail.INBOX_ADDRESS])
    assert first[0] == second[0] == 250
    assert b"duplicate" in second[1] and b"duplicate" not in first[1]
    assert service.store.count() == 1


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:2525") == ("127.0.0.1", 2525)
    assert parse_listen("[::1]:25") == ("::1", 25)
    for bad in ("2525", "host:", ":25", "h:99999", "h:x"):
        with pytest.raises(ValueError):
            parse_listen(bad)


@pytest.mark.anyio
async def test_cli_receiver_serves_on_the_running_loop(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    server = await start_smtp_server(service, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        greeting = await anyio.to_thread.run_sync(_greeting, port)
        code, _ = await anyio.to_thread.run_sync(send, port, mail.html_only(), [mail.INBOX_ADDRESS])
        refused_code = await anyio.to_thread.run_sync(_rcpt_code, port, "other@example.org")
    finally:
        server.close()
        await server.wait_closed()
    assert code == 250 and refused_code == 550
    assert greeting == b"assistant.example mcp-tools inbox"
    assert service.store.count() == 1


def _greeting(port: int) -> bytes:
    client = smtplib.SMTP(timeout=10)
    try:
        return client.connect("127.0.0.1", port)[1]
    finally:
        client.close()


def _rcpt_code(port: int, recipient: str) -> int:
    with smtp_client(port) as client:
        client.ehlo("x.example")
        client.mail("a@example.org")
        return client.rcpt(recipient)[0]


@pytest.mark.anyio
async def test_smtp_command_refuses_to_start_without_addresses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = mail.make_service(tmp_path, addresses=[])
    assert await run_smtp(service, argparse.Namespace(listen=None)) == EX_CONFIG
    assert "[inbox] addresses" in capsys.readouterr().err


def test_recipient_count_is_bounded(tmp_path: Path) -> None:
    service = mail.make_service(tmp_path)
    with receiver(service) as port, smtp_client(port) as client:
        client.ehlo("sender.example")
        client.mail("a@example.org")
        codes = [client.rcpt(mail.INBOX_ADDRESS)[0] for _ in range(MAX_RECIPIENTS + 2)]
    assert codes[:MAX_RECIPIENTS] == [250] * MAX_RECIPIENTS and codes[MAX_RECIPIENTS:] == [452, 452]
