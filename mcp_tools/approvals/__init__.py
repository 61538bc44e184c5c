"""Approvals outside the chat: the approvals page, the Telegram bot and the notify hook.

The policy layer (`mcp_tools.policy.channels`) knows only the small `ApprovalChannel`
interface; this package holds the channels, and composition (`mcp_tools.composition.app`)
builds them from `[approvals]`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from mcp_tools.approvals.page import ApprovalsPage
    from mcp_tools.core.config import ApprovalPageSettings, Config
    from mcp_tools.policy.channels import OutOfBand
    from mcp_tools.state.store import StateStore


def page_url(config: Config) -> str:
    """Where the page is reached: `[approvals.page] url`, else the address `approvals serve` binds."""
    page = config.approvals.page
    if page.url:
        return page.url
    from mcp_tools.util.net import url_host

    return f"http://{url_host(page.host)}:{page.port}/approvals"


def serve_page_here(
    settings: ApprovalPageSettings,
    store: StateStore,
    out_of_band: OutOfBand,
    security: TransportSecuritySettings,
    url: str,
) -> ApprovalsPage | None:
    """The page inside a running server (`serve --http`); calls wait for it when `url` is set."""
    from mcp_tools.approvals.page import ApprovalsPage
    from mcp_tools.policy.channels import PageChannel

    if not settings.enabled:
        return None
    if settings.allowed_hosts:
        security = security.model_copy(update={"allowed_hosts": [*security.allowed_hosts, *settings.allowed_hosts]})
    # The page alone tells nobody that a call waits, and many clients give up on a call after
    # about a minute: calls wait for it only when its address is configured (someone watches it).
    if settings.url and not any(channel.name == "page" for channel in out_of_band.channels):
        out_of_band.channels.append(PageChannel())
    if not settings.url:
        out_of_band.page_url = url
    return ApprovalsPage(store, out_of_band.decisions, settings, security)
