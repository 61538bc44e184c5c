"""Summaries: one call to a local OpenAI-compatible service, or a local extractive one."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_tools.servers.inbox.parsing import parse_message
from mcp_tools.servers.inbox.summary import (
    MAX_SUMMARY_CHARS,
    chat_completions_url,
    content_text,
    extractive_summary,
)
from tests.servers.inbox import fixtures as mail

pytestmark = pytest.mark.anyio
KEY = "sk-test-secret-key"


async def test_summary_comes_from_the_chat_endpoint(tmp_path: Path) -> None:
    with mail.fake_chat_server() as chat:
        service = mail.make_service(tmp_path, summary_url=chat.url, summary_model="tiny-1", summary_api_key=KEY)
        result = await service.ingest(mail.nested_forward(), via="test")
    stored = service.store.get(result.id)
    assert stored is not None
    assert stored["summary"] == chat.reply and stored["summary_source"] == "model"
    assert len(chat.requests) == 1
    request = chat.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == f"Bearer {KEY}"
    assert request["body"]["model"] == "tiny-1"
    roles = [message["role"] for message in request["body"]["messages"]]
    assert roles == ["system", "user"]
    assert "untrusted" in request["body"]["messages"][0]["content"]
    assert "Subject: Fwd: Fwd: Lease renewal" in request["body"]["messages"][1]["content"]


async def test_a_key_the_endpoint_echoes_is_neither_stored_nor_returned(tmp_path: Path) -> None:
    key = "sk-test-4fQ9zL2wKx7Mn3Pq"  # `sk-test-` is every test key's; what follows identifies this one
    with mail.fake_chat_server(expected_key=key) as chat:
        chat.reply = f"Lease renewal. (debug: called with Bearer {key}; prefix {key[:14]})"
        service = mail.make_service(tmp_path, summary_url=chat.url, summary_model="tiny-1", summary_api_key=key)
        result = await service.ingest(mail.nested_forward(), via="test")
    stored = service.store.get(result.id)
    assert stored is not None and stored["summary_source"] == "model"
    assert key[:12] not in stored["summary"] and stored["summary"].count("[redacted]") == 2
    database = b"".join(path.read_bytes() for path in tmp_path.rglob("*.sqlite3*"))
    assert database and key[:12].encode() not in database


async def test_api_key_can_come_from_the_environment(tmp_path: Path) -> None:
    with mail.fake_chat_server() as chat:
        service = mail.make_service(tmp_path, env={"MCP_TOOLS_SUMMARY_API_KEY": KEY}, summary_url=chat.url)
        result = await service.ingest(mail.multipart_alternative(), via="test")
    stored = service.store.get(result.id)
    assert stored is not None and stored["summary_source"] == "model"
    assert chat.requests[0]["authorization"] == f"Bearer {KEY}"


async def test_duplicates_make_no_second_call(tmp_path: Path) -> None:
    with mail.fake_chat_server() as chat:
        service = mail.make_service(tmp_path, summary_url=chat.url, summary_api_key=KEY)
        await service.ingest(mail.multipart_alternative(), via="test")
        await service.ingest(mail.multipart_alternative(), via="test")
    assert len(chat.requests) == 1


@pytest.mark.parametrize("mode", ["error", "garbage", "empty", "wrong_key", "slow"])
async def test_endpoint_failures_fall_back_to_local_summary_without_leaking_the_key(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with mail.fake_chat_server() as chat:
        chat.mode = mode
        key = "sk-wrong-key-do-not-log" if mode == "wrong_key" else KEY
        service = mail.make_service(tmp_path, summary_url=chat.url, summary_api_key=key, summary_timeout_seconds=0.5)
        result = await service.ingest(mail.multipart_alternative(), via="test")
    stored = service.store.get(result.id)
    assert stored is not None
    assert stored["summary_source"] == "extractive"
    assert stored["summary"].startswith("Quarterly report ready")
    assert "using a local summary" in caplog.text
    assert key not in caplog.text and key not in repr(service)


async def test_unreachable_endpoint_falls_back(tmp_path: Path) -> None:
    with mail.fake_chat_server() as chat:
        url = chat.url
    service = mail.make_service(tmp_path, summary_url=url, summary_api_key=KEY, summary_timeout_seconds=1)
    result = await service.ingest(mail.html_only(), via="test")
    stored = service.store.get(result.id)
    assert stored is not None and stored["summary_source"] == "extractive" and stored["summary"]


def test_chat_url_accepts_base_or_full_endpoint() -> None:
    assert chat_completions_url("http://h/v1/") == "http://h/v1/chat/completions"
    assert chat_completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


def test_extractive_summary_picks_subject_and_telling_sentences() -> None:
    body = (
        "Hi all. The lease renewal must be signed before December 1st. "
        "The weather is nice. Please sign the lease renewal and return it.\n\n"
        "> quoted earlier mail about lease lease lease\n-- \nSignature line"
    )
    summary = extractive_summary("Lease renewal", "Landlord <l@x>", body)
    assert summary.startswith("Lease renewal — ")
    assert "signed before December 1st" in summary
    assert "quoted" not in summary and "Signature" not in summary
    assert "weather" not in summary


@pytest.mark.parametrize(
    ("subject", "sender", "body", "expected"),
    [
        ("", "Alice <a@x>", "", "Message from Alice <a@x>"),
        ("", "", "", "Empty message with no subject or text"),
        ("", "", "。。。", "。。。"),
    ],
)
def test_extractive_summary_is_never_empty(subject: str, sender: str, body: str, expected: str) -> None:
    assert extractive_summary(subject, sender, body) == expected


def test_extractive_summary_is_bounded_and_handles_cjk() -> None:
    summary = extractive_summary("件名", "", "長い文章です。" * 500)
    assert 0 < len(summary) <= MAX_SUMMARY_CHARS
    assert extractive_summary("", "", "word " * 5000).endswith("…")


def test_forwarded_mail_is_summarised_by_its_forwarded_content() -> None:
    parsed = parse_message(mail.nested_forward())
    summary = extractive_summary(parsed.subject, parsed.sender, parsed.body)
    assert summary.startswith("Lease renewal — ")
    assert "signed before December 1st" in summary
    assert "Forwarded message" not in summary and "partner@home.example" not in summary


def test_content_text_drops_quotes_headers_and_signatures_but_keeps_forwards() -> None:
    body = (
        "FYI\n-- \nMe, sent from my phone\n\nBegin forwarded message:\n\nFrom: Shop <s@x>\n"
        "Subject: Refund\nDate: today\n\nYour refund of 42 EUR was approved.\n\n"
        "On Mon, Bob wrote:\n> old quoted text\n"
    )
    assert content_text(body) == "FYI\nYour refund of 42 EUR was approved."
