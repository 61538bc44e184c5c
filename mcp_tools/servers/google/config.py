"""The `[google]` section: the Google accounts gmail and the other Google namespaces use.

One account signs in under the label `default` (`mcp-tools auth google`); more sign in under
labels of their own (`--account work`), and `[google.accounts.LABEL]` narrows what one may do.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.google.labels import ALL_ACCOUNTS, DEFAULT_ACCOUNT, LABEL, check_label

__all__ = ["ALL_ACCOUNTS", "DEFAULT_ACCOUNT", "LABEL", "check_label"]


def auth_command(account: str | None = None) -> str:
    """`mcp-tools auth google [--account LABEL]`, spelled to work from here (`mcp_tools.util.commands`)."""
    from mcp_tools.util.commands import mcp_tools

    if account is None or account == DEFAULT_ACCOUNT:
        return mcp_tools("auth", "google")
    return mcp_tools("auth", "google", "--account", account)


class AccountDrive(BaseModel):
    """`[google.accounts.LABEL.drive]`: the account's own Drive access level."""

    model_config = ConfigDict(extra="forbid")

    access: Literal["app", "read", "all"] | None = Field(
        default=None, description="As [drive] access, for this account only (default: [drive] access)."
    )


class AccountSettings(BaseModel):
    """`[google.accounts.LABEL]`: what one signed-in account may do, narrower than the namespaces allow."""

    model_config = ConfigDict(extra="forbid")

    read_only: bool = Field(default=False, description="Only the reading tools act as this account.")
    allowed_recipients: list[str] | None = Field(
        default=None, description="As [gmail] allowed_recipients, for mail sent from this account."
    )
    drive: AccountDrive | None = Field(default=None, description="This account's own Drive access level.")
    shared_with: list[str] = Field(
        default_factory=list,
        description="With [http.oauth] and an outside issuer: principals (as the audit log names them) that may "
        "use this account of the person's too.",
        examples=[["bob@https://auth.example.org"]],
    )

    @field_validator("allowed_recipients")
    @classmethod
    def _recipients(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        cleaned = [pattern.strip().lower() for pattern in value if pattern.strip()]
        for pattern in cleaned:
            if "@" not in pattern:
                raise ValueError(f"{pattern!r} must look like an address or a glob such as *@example.com")
        return cleaned


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
    token_file: Path | None = Field(
        default=None, description="A token file of an older version, moved into the state store when found."
    )
    api_endpoint: str | None = Field(default=None, description="Another API root (a proxy, a test server).")
    retry_seconds: float = Field(default=20.0, ge=0, le=300, description="Total wait for retries of one call.")
    timeout_seconds: float = Field(default=60.0, gt=0, le=600, description="Most one API request may take.")
    default_account: str | None = Field(
        default=None,
        description="The account a Google tool uses when its call names none (default: the only one, or 'default').",
        examples=["personal"],
    )
    accounts: dict[str, AccountSettings] = Field(
        default_factory=dict, description="[google.accounts.LABEL]: what one signed-in account may do."
    )

    @field_validator("default_account")
    @classmethod
    def _default_account(cls, value: str | None) -> str | None:
        return check_label(value.strip().lower()) if value is not None else None

    @field_validator("accounts")
    @classmethod
    def _labels(cls, value: dict[str, AccountSettings]) -> dict[str, AccountSettings]:
        """Labels are matched in lower case, as `auth google --account` stores them."""
        return {check_label(label.strip().lower()): settings for label, settings in value.items()}

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from urllib.parse import urlsplit

        from mcp_tools.util.net import is_loopback

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
    from mcp_tools.core.config import validate_section

    return validate_section("google", GoogleConfig, env.sections.get("google", {}))


def signed_in(config: GoogleConfig, env: Environment) -> list[str]:
    """The person's labels with a stored token: `default` first, then the others by name."""
    from mcp_tools.servers.google.tokens import signed_in as stored

    return stored(config, env)


def require_libraries(extra: str) -> None:
    """Cheap check (no import) that the Google libraries are installed."""
    for name in LIBRARIES:
        root = name.split(".")[0]
        if importlib.util.find_spec(root) is None:
            from mcp_tools.util.commands import pip_install

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
    accounts = signed_in(config, env)
    if config.client_secrets is None and not accounts:
        raise NotConfigured(
            'set [google] client_secrets = "path/to/client_secret.json" (see docs/google.md), '
            f"then run `{auth_command()}`"
        )
    if not accounts:
        raise NotConfigured(f"not signed in to Google yet: run `{auth_command()}`")
