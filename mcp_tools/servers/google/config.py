"""The `[google]` section: one Google account shared by gmail and the other Google namespaces."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mcp_tools.tooling import Environment, NotConfigured


def auth_command() -> str:
    """`mcp-tools auth google`, spelled to work from here (`mcp_tools.commands`)."""
    from mcp_tools.commands import mcp_tools

    return mcp_tools("auth", "google")


LIBRARIES = ("googleapiclient", "google.oauth2", "google_auth_httplib2", "google_auth_oauthlib")


class GoogleConfig(BaseModel):
    """The `[google]` section: the Google account that gmail, drive, docs, sheets, tasks and a Google calendar
    use; `mcp-tools auth google` signs in."""

    model_config = ConfigDict(extra="forbid")

    client_secrets: Path | None = Field(
        default=None,
        description="OAuth client file (Desktop app) downloaded from the Google Cloud console; then "
        "`mcp-tools auth google`.",
        examples=["~/.config/mcp-tools/client_secret.json"],
    )
    service_account_file: Path | None = Field(
        default=None, description="Service-account key, for Workspace domain-wide delegation instead of OAuth."
    )
    subject: str | None = Field(default=None, description="The user a service account acts as.")
    token_file: Path | None = Field(default=None, description="Where the OAuth token lives (default state dir).")
    api_endpoint: str | None = Field(default=None, description="Another API root (a proxy, a test server).")
    retry_seconds: float = Field(default=20.0, ge=0, le=300, description="Total wait for retries of one call.")
    timeout_seconds: float = Field(default=60.0, gt=0, le=600, description="Most one API request may take.")

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from urllib.parse import urlsplit

        from mcp_tools.net import is_loopback

        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.query:
            raise ValueError("api_endpoint must be an http(s) URL such as https://gmail.googleapis.com/")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise ValueError("api_endpoint must use https (plain http is allowed only for localhost)")
        return value.strip().rstrip("/") + "/"

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str | None) -> str | None:
        if value is not None and value.count("@") != 1:
            raise ValueError("subject must be the email address of the user to act as")
        return value


def google_config(env: Environment) -> GoogleConfig:
    from mcp_tools.config import validate_section

    return validate_section("google", GoogleConfig, env.sections.get("google", {}))


def token_path(config: GoogleConfig, env: Environment) -> Path:
    return (config.token_file or env.state_dir / "google" / "token.json").expanduser()


def require_libraries(extra: str) -> None:
    """Cheap check (no import) that the Google libraries are installed."""
    for name in LIBRARIES:
        root = name.split(".")[0]
        if importlib.util.find_spec(root) is None:
            from mcp_tools.commands import pip_install

            error = ImportError(f"{root} is missing; run: {pip_install(extra)}")
            error.name = root
            raise error


def account_for(
    namespace: str, env: Environment, tool_names: Iterable[str], access: str = "app"
) -> tuple[GoogleConfig, list[str]]:
    """What a Google namespace's `create` checks, cheaply (nothing of Google's is imported): asked
    for (`mcp_tools.servers.OPT_IN`), libraries installed, account set up. Returns the `[google]`
    section and the scopes the namespace's tools ask for at its access level."""
    from mcp_tools.servers import asked_for, not_asked_for
    from mcp_tools.servers.google.scopes import requested_scopes

    if not asked_for(namespace, env.sections, env.servers):
        raise NotConfigured(not_asked_for(namespace))
    require_libraries(namespace)
    google = google_config(env)
    check_configured(google, env)
    return google, requested_scopes(tool_names, {namespace: access})


def check_configured(config: GoogleConfig, env: Environment) -> None:
    """Off with a reason when there is no way to sign in, or nobody has signed in yet."""
    if config.service_account_file is not None:
        if not config.subject:
            raise NotConfigured("set [google] subject (the user the service account acts as)")
        if not config.service_account_file.expanduser().is_file():
            raise NotConfigured(f"[google] service_account_file {config.service_account_file} does not exist")
        return
    if config.client_secrets is None:
        raise NotConfigured(
            'set [google] client_secrets = "path/to/client_secret.json" (see docs/google.md), '
            f"then run `{auth_command()}`"
        )
    if not token_path(config, env).is_file():
        raise NotConfigured(f"not signed in to Google yet: run `{auth_command()}`")
