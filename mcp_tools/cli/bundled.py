"""mcp-tools run from an MCP Bundle: the host's settings dialog becomes the config.

The host (Claude Desktop) starts `server/main.py` of the unpacked bundle with its Python and the
environment the manifest names (`mcp_tools.cli.bundle` writes both). Each setting arrives in an
environment variable; one the person left empty arrives as "" or, from hosts that leave an unset
`${user_config.KEY}` as written, as that placeholder: both mean unset. The config is made in
memory, so nothing is written, and the Telegram bot token stays in the environment
(MCP_TOOLS_TELEGRAM_BOT_TOKEN), where the config reads secrets from.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcp_tools.cli.bundle import API_ENV, BUILT_FOR_ENV, CHAT_ENV, FILES_ENV, TOOLS_ENV, VAULT_ENV
from mcp_tools.core.config import TELEGRAM_TOKEN_ENV, Config, ConfigError


@dataclass(frozen=True)
class Setting:
    """One field of the host's dialog: its key in `user_config`, and the variable it arrives in."""

    key: str
    env: str
    title: str
    required: bool = False


SETTINGS = (
    Setting("files_folder", FILES_ENV, "Files folder", required=True),
    Setting("notes_vault", VAULT_ENV, "Notes vault"),
    Setting("tools", TOOLS_ENV, "Tools to serve"),
    Setting("telegram_bot_token", TELEGRAM_TOKEN_ENV, "Telegram bot token"),
    Setting("telegram_chat_id", CHAT_ENV, "Telegram chat id"),
)


def setting(environ: Mapping[str, str], name: str) -> str | None:
    """A setting's value, or None when the person left it empty."""
    value = environ.get(name, "").strip()
    return None if not value or value.startswith("${user_config.") else value


def bundle_config(environ: MutableMapping[str, str]) -> Config:
    """The config the settings describe. Raises ConfigError naming what is missing or wrong.

    An unset token is taken out of `environ`, so the placeholder a host left is not read as one.
    """
    from mcp_tools.core.config import parse_config

    missing = [f"{item.title} ({item.key})" for item in SETTINGS if item.required and not setting(environ, item.env)]
    if missing:
        raise ConfigError(
            f"the bundle's setting {', '.join(missing)} is empty: set it in the host's settings for mcp-tools "
            "(Claude Desktop: Settings > Extensions > mcp-tools > Configure)"
        )
    token, chat = setting(environ, TELEGRAM_TOKEN_ENV), setting(environ, CHAT_ENV)
    if token is None:
        environ.pop(TELEGRAM_TOKEN_ENV, None)
    if (token is None) != (chat is None):
        given, needed = ("Telegram bot token", "Telegram chat id") if chat is None else ("chat id", "bot token")
        raise ConfigError(f"the bundle has a Telegram {given} but no {needed}: set both, or neither")
    files = setting(environ, FILES_ENV)
    vault = setting(environ, VAULT_ENV)
    tools = setting(environ, TOOLS_ENV)
    namespaces = ["files", "inbox", "search"] + (["notes"] if vault else [])
    raw: dict[str, Any] = {"server": {"namespaces": namespaces}, "files": {"root": files}}
    if tools:
        raw["server"]["tools"] = [entry.strip() for entry in tools.split(",") if entry.strip()]
    if vault:
        raw["notes"] = {"vault": vault}
    if chat is not None:
        try:
            chat_id = int(float(chat))  # the host passes a number setting as its decimal text
        except ValueError:
            raise ConfigError(f"the bundle's Telegram chat id must be a number, not {chat!r}") from None
        raw["approvals"] = {"telegram": {"chat_id": chat_id}}
        if setting(environ, API_ENV):
            raw["approvals"]["telegram"]["api_base"] = setting(environ, API_ENV)
    return parse_config(raw, environ)


def check_python(environ: Mapping[str, str]) -> None:
    """The bundled libraries hold compiled parts for one Python and platform: say so plainly if
    the host started another, instead of an ImportError from deep inside pydantic."""
    built_for = environ.get(BUILT_FOR_ENV, "")
    running = f"{sys.version_info.major}.{sys.version_info.minor} {sys.platform}"
    if built_for and built_for != running:
        raise ConfigError(
            f"this bundle was built for Python {built_for} and the host started Python {running} "
            f"({sys.executable}); build the bundle with that Python (`mcp-tools bundle`), or have the host "
            f"run Python {built_for}"
        )


def main() -> int:
    """Serve MCP over stdio with the host's settings; exit 2 with the reason when one is wrong."""
    from mcp_tools.cli.main import main as cli_main

    try:
        check_python(os.environ)
        config = bundle_config(os.environ)
    except ConfigError as exc:
        print(f"mcp-tools: {exc}", file=sys.stderr)
        return 2
    return cli_main(["serve"], config=config)
