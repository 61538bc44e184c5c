"""`url_asker` decides alone whether a call gets a URL-mode asker: no approvals page to link to, a
client that did not declare URL mode, or a 2025-era connection without a back channel get none;
a 2026-07-28 connection gets the link as an input request, back channel or not; and who asks
(principal, client, progress) is read only once an asker is made."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.approvals.elicit_url import InputRequiredUrlElicitation, url_asker
from mcp_tools.policy.gate import Caller


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    return None


def context(url: bool = True, back_channel: bool = True, version: str = "2025-11-25") -> Any:
    elicitation = types.ElicitationCapability(url=types.UrlElicitationCapability()) if url else None
    capabilities = types.ClientCapabilities(elicitation=elicitation)
    return SimpleNamespace(
        protocol_version=version,
        session=SimpleNamespace(client_capabilities=capabilities, can_send_request=back_channel),
    )


def composed(page_url: str | None) -> Any:
    policy = SimpleNamespace(approval_ttl_seconds=600, elicitation_timeout_seconds=30)
    out_of_band = SimpleNamespace(page_url=page_url, wait_seconds=0)
    return SimpleNamespace(config=SimpleNamespace(policy=policy), store=object(), out_of_band=out_of_band)


class Callers:
    """The caller factory the MCP server hands over; counts what it was asked to build."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self) -> Caller:
        self.built += 1
        return Caller(transport="stdio", principal="ann", client="Inspector", progress=_progress)


@pytest.mark.parametrize(
    ("page_url", "ctx"),
    [
        (None, context()),  # no approvals page to link to
        ("http://127.0.0.1:1/approvals", context(url=False)),  # the client did not declare URL mode
        ("http://127.0.0.1:1/approvals", context(back_channel=False)),  # stateless HTTP
        ("http://127.0.0.1:1/approvals", context(url=False, version="2026-07-28")),
    ],
)
def test_no_url_asker_and_no_caller_built_where_no_link_can_be_offered(page_url: str | None, ctx: Any) -> None:
    callers = Callers()
    assert url_asker(ctx, composed(page_url), callers, "files_delete", trusted=True) is None
    assert callers.built == 0


@pytest.mark.parametrize("back_channel", [True, False])
def test_a_2026_07_28_connection_gets_the_link_as_an_input_request(back_channel: bool) -> None:
    callers = Callers()
    ctx = context(back_channel=back_channel, version="2026-07-28")
    asker = url_asker(ctx, composed("http://127.0.0.1:1/approvals"), callers, "files_delete", trusted=False)
    assert isinstance(asker, InputRequiredUrlElicitation) and callers.built == 1


def test_a_url_asker_reads_who_asks_once_it_is_made() -> None:
    callers = Callers()
    asker = url_asker(context(), composed("http://127.0.0.1:1/approvals"), callers, "files_delete", trusted=False)
    assert asker is not None and callers.built == 1
    assert (asker.principal, asker.client, asker.transport, asker.progress) == ("ann", "Inspector", "stdio", _progress)
    assert (asker.channel, asker.wire_name, asker.ttl, asker.wait_seconds) == (
        "elicitation-url:stdio",
        "files_delete",
        600,
        30,
    )
