"""Parsing the MIME corpus: every sample yields readable text, none raises."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from mcp_tools.servers.inbox.parsing import parse_message
from mcp_tools.util.text import html_to_text
from tests.servers.inbox import fixtures as mail


def test_multipart_alternative_prefers_plain_text() -> None:
    parsed = parse_message(mail.multipart_alternative())
    assert parsed.body_format == "plain"
    assert "quarterly report is ready" in parsed.body
    assert "HTML" not in parsed.body
    assert parsed.sender == "Bob Builder <bob@example.com>"
    assert parsed.sender_address == "bob@example.com"
    assert parsed.recipients == ["inbox@assistant.example", "Carol <carol@example.com>"]
    assert parsed.message_id == "alt-1@example.com"
    assert parsed.date == datetime(2026, 11, 3, 13, 0, tzinfo=UTC)
    assert parsed.warnings == []


def test_html_only_becomes_text_without_scripts_or_styles() -> None:
    parsed = parse_message(mail.html_only())
    assert parsed.body_format == "html"
    assert "Order #4711 shipped" in parsed.body
    assert "Your parcel is on its way & arrives Thursday." in parsed.body
    assert "- Blue kettle" in parsed.body
    assert "Track parcel (https://shop.example/track/4711)" in parsed.body
    for hidden in ("alert", "tracking", "color: red", "ignored title", "<p>"):
        assert hidden not in parsed.body


def test_html_to_text_ignores_javascript_links() -> None:
    text = html_to_text('<a href="javascript:steal()">click</a><br>line two')
    assert text == "click\nline two"


def test_attachments_are_listed_with_names_types_and_sizes() -> None:
    parsed = parse_message(mail.with_attachments())
    assert parsed.body == "Invoice attached, plus the customer list."
    names = [(item.filename, item.content_type, item.size) for item in parsed.attachments]
    assert names[0] == ("invoice.pdf", "application/pdf", len(mail.PDF_BYTES))
    assert names[1][0:2] == ("kunden übersicht.csv", "text/csv")
    assert parsed.attachments[0].data == mail.PDF_BYTES
    assert parsed.attachments[1].data.decode("utf-8") == "name;city\nZoë;Zürich\n"


def test_attachment_names_lose_any_path() -> None:
    parsed = parse_message(mail.with_attachments())
    assert parsed.attachments[2].filename == "evil.sh"


def test_latin1_body_and_encoded_headers() -> None:
    parsed = parse_message(mail.latin1_body())
    assert parsed.body == "Le café crème est prêt à Genève."
    assert parsed.subject == "Réunion à Genève"
    assert parsed.sender == "André <andre@example.fr>"


def test_shift_jis_body_and_subject() -> None:
    parsed = parse_message(mail.shift_jis_body())
    assert parsed.body == "会議の議事録を送ります。確認してください。"
    assert parsed.subject == "議事録"
    assert parsed.sender == "山田 <yamada@example.jp>"
    assert parsed.warnings == []


def test_rfc2047_subject_with_mixed_encoded_words() -> None:
    assert parse_message(mail.rfc2047_subject()).subject == "🎉 Party am Samstag für Jürgen"


def test_nested_forwards_keep_every_level_and_inner_attachments() -> None:
    parsed = parse_message(mail.nested_forward())
    body = parsed.body
    order = [
        body.index("See the landlord's mail below."),
        body.index("From: Partner <partner@home.example>"),
        body.index("Can you deal with this?"),
        body.index("From: Landlord <landlord@rent.example>"),
        body.index("signed before December 1st"),
    ]
    assert order == sorted(order)
    assert body.count("---------- Forwarded message ----------") == 2
    assert [item.filename for item in parsed.attachments] == ["lease.txt"]
    assert parsed.subject == "Fwd: Fwd: Lease renewal"


def test_truncated_message_keeps_what_was_readable_and_warns() -> None:
    parsed = parse_message(mail.truncated())
    assert parsed.subject == "Invoice and data"
    assert "Invoice attached" in parsed.body
    assert any("Boundary" in warning for warning in parsed.warnings)


def test_unknown_charset_is_decoded_with_a_warning() -> None:
    parsed = parse_message(mail.unknown_charset())
    assert parsed.body.startswith("Café and")
    assert any("x-made-up-charset" in warning for warning in parsed.warnings)


def test_malformed_headers_do_not_lose_the_message() -> None:
    parsed = parse_message(mail.malformed_headers())
    assert "body still here" in parsed.body
    assert parsed.subject == "Broken but readable"
    assert parsed.date is None
    assert parsed.warnings


@pytest.mark.parametrize(
    "raw",
    [
        b"\x00\x01\x02binary junk \xff\xfe",
        b"Subject: only a header",
        b"Content-Type: multipart/mixed; boundary=X\r\n\r\n--X\r\nContent-Type: message/rfc822\r\n\r\n",
        b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n@@@not base64",
        b"Content-Type: text/html\r\n\r\n<div><p>unclosed <b>tags <script>x",
    ],
)
def test_garbage_never_raises(raw: bytes) -> None:
    parsed = parse_message(raw)
    assert isinstance(parsed.body, str)


def test_forwarding_loop_depth_is_bounded() -> None:
    inner = mail.simple(subject="core", body="deepest text", message_id=None)
    for level in range(20):
        inner = (
            (
                f"Subject: level {level}\r\nContent-Type: multipart/mixed; boundary=B{level}\r\n\r\n"
                f"--B{level}\r\nContent-Type: message/rfc822\r\n\r\n"
            ).encode()
            + inner
            + f"\r\n--B{level}--\r\n".encode()
        )
    parsed = parse_message(inner)
    assert any("nested deeper" in warning for warning in parsed.warnings)
    assert "deepest text" not in parsed.body


def test_dedupe_key_uses_message_id_or_raw_hash() -> None:
    with_id = mail.simple(message_id="<same@x>")
    assert parse_message(with_id).dedupe_key(with_id) == "mid:same@x"
    without = mail.simple(message_id=None)
    assert parse_message(without).dedupe_key(without).startswith("sha256:")
    other = mail.simple(message_id=None, body="different")
    assert parse_message(other).dedupe_key(other) != parse_message(without).dedupe_key(without)


@pytest.mark.parametrize("name", sorted(mail.corpus()))
def test_every_corpus_sample_parses(name: str) -> None:
    parsed = parse_message(mail.corpus()[name])
    assert parsed.body or parsed.subject


def test_forwarded_senders_come_from_attached_and_inline_forwards() -> None:
    assert parse_message(mail.nested_forward()).forwarded_from == [
        "Partner <partner@home.example>",
        "Landlord <landlord@rent.example>",
    ]
    inline = mail.simple(
        body=(
            "FYI\n\nBegin forwarded message:\n\nFrom: Bank <no-reply@bank.example>\nSubject: Statement\n\n"
            "From: this line is body text, not a header\n"
        )
    )
    assert parse_message(inline).forwarded_from == ["Bank <no-reply@bank.example>"]
    assert parse_message(mail.simple(body="From: not a forward")).forwarded_from == []


def test_utf8_forward_as_message_global() -> None:
    inner = "From: Zoë <zoe@example.org>\r\nSubject: Grüße\r\n\r\nHallo aus Zürich\r\n".encode()
    raw = (
        b"From: me@home.example\r\nSubject: Fwd\r\nContent-Type: multipart/mixed; boundary=G\r\n\r\n"
        b"--G\r\nContent-Type: message/global\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" + inner + b"\r\n--G--\r\n"
    )
    parsed = parse_message(raw)
    assert "Hallo aus Zürich" in parsed.body and "Subject: Grüße" in parsed.body
    assert parsed.forwarded_from == ["Zoë <zoe@example.org>"]
    assert parsed.attachments == []


@pytest.mark.parametrize(
    "date_header",
    [
        "Fri, 31 Dec 9999 23:59:59 -0100",
        "Mon, 01 Jan 0001 00:00:00 +0100",
        "Mon, 99 Foo 2026 99:99:99 +9999",
        "",
        "=?utf-8?q?gestern?=",
    ],
)
def test_out_of_range_or_nonsense_dates_are_dropped_with_a_warning(date_header: str) -> None:
    parsed = parse_message(f"Date: {date_header}\r\nSubject: x\r\n\r\nbody".encode())
    assert parsed.body == "body"
    assert parsed.date is None or parsed.date.tzinfo is not None


def test_random_corruption_of_the_corpus_never_raises() -> None:
    rng = random.Random(20261122)
    samples = list(mail.corpus().values())
    for _ in range(300):
        raw = bytearray(rng.choice(samples))
        for _ in range(rng.randint(1, 20)):
            position = rng.randrange(max(1, len(raw)))
            action = rng.random()
            if action < 0.4 and raw:
                raw[position] = rng.randrange(256)
            elif action < 0.7:
                del raw[position : position + rng.randint(1, 200)]
            else:
                raw[position:position] = rng.choice([b"\r\n", b"--", b"=?", b"?=", b":", b"<", b"\x00", b"boundary="])
        parsed = parse_message(bytes(raw))
        assert isinstance(parsed.body, str) and isinstance(parsed.subject, str)
