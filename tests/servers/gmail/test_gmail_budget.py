"""gmail on a long thread and big attachments, with the largest arguments the schemas take."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.budgets import assert_fits, says_more, structured
from tests.harness import connect
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import plain, sign_in

pytestmark = pytest.mark.anyio
MESSAGES = 200


async def test_a_200_message_thread_is_paged_and_each_page_carries_only_its_own_headers(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
) -> None:
    first = gmail.add(plain(subject="Plan 0", body="Opening words. " * 60, message_id="<p0@x>"))
    for i in range(1, MESSAGES):
        raw = plain(subject=f"Re: Plan {i}", body=f"Reply {i}. " + "More thoughts. " * 60, message_id=f"<p{i}@x>")
        gmail.add(raw, thread_id=first.thread_id)
    pages = []
    async with connect(tmp_path, sign_in(tmp_path, google)) as client:
        offset: int | None = 0
        while offset is not None:
            arguments = {"id": first.thread_id, "thread": True, "offset": offset, "max_chars": 30_000}
            result = await client.call_tool("gmail_read", arguments)
            assert_fits(result)
            page = structured(result)
            pages.append(page)
            if page["next_offset"] is not None:
                says_more(result, f"offset={page['next_offset']}")
            offset = page["next_offset"]
        last = structured(await client.call_tool("gmail_read", {"id": first.thread_id, "thread": True}))
    assert all(page["messages_total"] == MESSAGES for page in pages)
    shown = [message["subject"] for page in pages for message in page["messages"]]
    assert set(shown) == {"Plan 0", *(f"Re: Plan {i}" for i in range(1, MESSAGES))}
    assert len(shown) < MESSAGES + len(pages)  # a message split over two pages is named on both, no more
    assert len(last["messages"]) < 10  # the default 8,000 characters name only the messages they hold
