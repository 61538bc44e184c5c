"""inbox on big mail, with the largest arguments the schemas take: each result fits the budget."""

from __future__ import annotations

import base64
import os
from email.message import EmailMessage
from pathlib import Path

import pytest

from mcp_tools.composition.app import build_app
from tests.budgets import assert_fits, says_more, structured
from tests.harness import connect, make_config
from tests.servers.inbox import fixtures as mail

pytestmark = pytest.mark.anyio
SETTINGS = {
    "server": {"servers": ["inbox"]},
    "inbox": {"addresses": [mail.INBOX_ADDRESS], "max_attachment_bytes": 2_000_000},
}


def big_mail(number: int, pdf: bytes, paragraphs: int) -> bytes:
    message = EmailMessage()
    message["From"] = f"Sender {number} <s{number}@example.net>"
    message["To"] = mail.INBOX_ADDRESS
    message["Subject"] = f"Quarterly report {number} with a long subject line to list"
    message["Message-ID"] = f"<big-{number}@example.net>"
    message.set_content("".join(f"Paragraph {i} of a long report about the quarter.\n" for i in range(paragraphs)))
    message.add_attachment(pdf, maintype="application", subtype="pdf", filename="report.pdf")
    return message.as_bytes()


async def test_a_big_mail_and_its_1_mb_pdf_fit_the_budget(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, SETTINGS))
    pdf = b"%PDF-1.7\n" + os.urandom(1024 * 1024)
    service = app.services["inbox"]
    stored = [
        await service.ingest(big_mail(n, pdf if n == 0 else b"%PDF-1.7\n", 6_000 if n == 0 else 20), via="test")
        for n in range(60)
    ]
    async with connect(tmp_path, app=app, elicit=None) as client:
        listing = await client.call_tool("inbox_search", {"query": "quarterly", "limit": 50})
        read = await client.call_tool("inbox_read", {"id": stored[0].id, "max_chars": 30_000})
        attachment = await client.call_tool("inbox_attachment", {"id": stored[0].id, "index": 0, "max_chars": 30_000})
        pieces, offset = [], 0
        while offset is not None:
            arguments = {"id": stored[0].id, "index": 0, "offset": offset, "max_chars": 30_000}
            page = await client.call_tool("inbox_attachment", arguments)
            assert_fits(page)
            pieces.append(structured(page)["content"])
            offset = structured(page)["next_offset"]
    for result in (listing, read, attachment):
        assert_fits(result)
    says_more(attachment, "offset=30000")
    assert "application/pdf, 1,048,585 bytes" in attachment.content[0].text
    assert base64.b64decode("".join(pieces)) == pdf
    assert structured(read)["next_offset"] == 30_000
