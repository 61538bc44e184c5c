"""Approvals outside the chat: the approvals page, the Telegram bot and the notify hook.

The policy layer (`mcp_tools.policy.channels`) knows only the small `ApprovalChannel`
interface; this package holds the channels and builds them from `[approvals]`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from mcp_tools.approvals.page import ApprovalsPage
    from mcp_tools.config import ApprovalPageSettings, Config
    from mcp_tools.policy.channels import ApprovalChannel, OutOfBand
    from mcp_tools.policy.decisions import Decisions
    from mcp_tools.policy.store import StateStore


def page_url(config: Config) -> str:
    """Where the page is reached: `[approvals.page] url`, else the address `approvals serve` binds."""
    page = config.approvals.page
    if page.url:
        return page.url
    host = f"[{page.host}]" if ":" in page.host else page.host
    return f"http://{host}:{page.port}/approvals"


def build_out_of_band(config: Config, decisions: Decisions) -> OutOfBand:
    """The channels `[approvals]` configures; heavy parts load only when a channel is on."""
    from mcp_tools.policy.channels import OutOfBand, PageChannel

    settings = config.approvals
    channels: list[ApprovalChannel] = []
    if settings.page.enabled and settings.page.url:
        channels.append(PageChannel())
    if settings.telegram is not None:
        from mcp_tools.approvals.telegram import TelegramChannel

        token = config.telegram_token()
        if token is None:
            from mcp_tools.config import TELEGRAM_TOKEN_ENV, ConfigError

            raise ConfigError(f"[approvals.telegram] needs bot_token (or {TELEGRAM_TOKEN_ENV})")
        channels.append(TelegramChannel(settings.telegram, token, config.state_dir(), decisions.store))
    if settings.notify is not None and (settings.notify.command or settings.notify.url):
        from mcp_tools.approvals.hook import NotifyHook

        channels.append(NotifyHook(settings.notify))
    return OutOfBand(
        decisions,
        channels,
        wait_seconds=settings.wait_seconds,
        progress_interval=settings.progress_interval_seconds,
        page_url=settings.page.url if settings.page.enabled else None,  # a link only to a page that runs
    )


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
