"""`mcp-tools auth google` and the Google lines of `mcp-tools doctor`."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from typing import Any

from mcp_tools.core.config import Config, validate_section
from mcp_tools.servers.google.config import GoogleConfig, auth_command, signed_in
from mcp_tools.servers.google.scopes import NAMESPACES, access_levels, missing_scopes, requested_scopes, short


def enabled_tools(config: Config) -> list[str]:
    """Canonical names of the Google tools the policy shows, in the selected namespaces."""
    from mcp_tools.policy.rules import RulePolicy
    from mcp_tools.servers import asked_for, load_namespace

    rules = RulePolicy(config.policy)
    selected = config.server.namespaces
    names = []
    for name in NAMESPACES:
        if (selected is not None and name not in selected) or not asked_for(name, config.sections, selected):
            continue
        section = config.sections.get(name)
        if name == "calendar" and not (isinstance(section, dict) and section.get("backend") == "google"):
            continue  # the calendar speaks CalDAV unless told otherwise: no Google scopes
        names += [spec.name for spec in load_namespace(name).tools if rules.hidden_reason(spec) is None]
    return names


def account_tools(config: Config, google: GoogleConfig, label: str) -> list[str]:
    """The enabled Google tools that may act as the account (only the reading ones when it is read-only)."""
    tools = enabled_tools(config)
    settings = google.accounts.get(label)
    if settings is None or not settings.read_only:
        return tools
    from mcp_tools.servers import load_namespace

    reading = {spec.name for name in NAMESPACES for spec in load_namespace(name).tools if spec.read_only}
    return [tool for tool in tools if tool in reading]


def account_access(config: Config, google: GoogleConfig, label: str) -> dict[str, str]:
    """Each namespace's access level for the account (its own `[google.accounts.LABEL.drive] access`)."""
    access = access_levels(config.sections)
    settings = google.accounts.get(label)
    if settings is not None and settings.drive is not None and settings.drive.access is not None:
        access = {**access, "drive": settings.drive.access}
    return access


def _missing(tool: str, granted: list[str], access: dict[str, str]) -> list[str]:
    return missing_scopes(tool, granted, access.get(tool.split(".")[0], "app"))


def _google(config: Config) -> GoogleConfig:
    return validate_section("google", GoogleConfig, config.sections.get("google", {}))


def _profile(google: GoogleConfig) -> Callable[[Any], str | None]:
    def profile(credentials: Any) -> str | None:
        import google_auth_httplib2
        import httplib2
        from googleapiclient.discovery import build

        http = google_auth_httplib2.AuthorizedHttp(credentials, http=httplib2.Http(timeout=google.timeout_seconds))
        options = {"api_endpoint": google.api_endpoint} if google.api_endpoint else None
        service = build("gmail", "v1", http=http, static_discovery=True, cache_discovery=False, client_options=options)
        address: str | None = service.users().getProfile(userId="me").execute().get("emailAddress")
        return address

    return profile


def auth_google(
    config: Config,
    args: argparse.Namespace,
    *,
    open_url: Callable[[str], Any] | None = None,
    read_line: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> int:
    from mcp_tools.cli import google_accounts
    from mcp_tools.servers.google.account import SignInError, sign_in
    from mcp_tools.servers.google.config import DEFAULT_ACCOUNT, check_label
    from mcp_tools.servers.google.tokens import TokenSlot

    google = _google(config)
    if google.service_account_file is not None:
        say("[google] uses a service account (domain-wide delegation); there is nothing to sign in.")
        return 0
    try:
        label = check_label((getattr(args, "account", None) or DEFAULT_ACCOUNT).strip().lower())
        removing = getattr(args, "remove", None)
        if removing:
            removing = check_label(removing.strip().lower())
    except ValueError as error:
        print(f"mcp-tools: {error}", file=sys.stderr)
        return 2
    if getattr(args, "list", False):
        return google_accounts.list_accounts(config, google, say)
    if removing:
        return google_accounts.remove_account(config, google, removing, say)
    if getattr(args, "import_file", None):
        return google_accounts.import_account(config, google, label, args.import_file, say, _profile(google))
    tools = account_tools(config, google, label)
    access = account_access(config, google, label)
    scopes = requested_scopes(tools, access)
    if not scopes:
        print("mcp-tools: no Google tool is enabled (check [server] namespaces and [policy])", file=sys.stderr)
        return 2
    say("Asking for: " + ", ".join(short(scope) for scope in scopes))
    profile = _profile(google) if any(scope.split("/")[-1].startswith("gmail.") for scope in scopes) else None
    try:
        data = sign_in(
            google,
            TokenSlot(google_accounts.environment(config), label).write,
            scopes,
            no_browser=getattr(args, "no_browser", False),
            open_url=open_url,
            read_line=read_line,
            say=say,
            profile=profile,
        )
    except SignInError as error:
        print(f"mcp-tools: {error}", file=sys.stderr)
        return 1
    named = "" if label == DEFAULT_ACCOUNT else f" ({label})"
    say(f"Signed in{named} as {data.get('account') or 'an unknown account'}; token saved in the state store.")
    lacking = {tool: missing for tool in tools if (missing := _missing(tool, data["scopes"], access))}
    for tool, missing in lacking.items():
        say(f"warning: {tool} will not work: not granted {', '.join(short(s) for s in missing)}")
    return 0


def doctor_lines(config: Config) -> list[str]:
    """Account, granted scopes, token expiry and what the enabled tools lack; no network."""
    from mcp_tools.cli.google_accounts import environment
    from mcp_tools.core.config import ConfigError
    from mcp_tools.servers.google.account import read_client_secrets
    from mcp_tools.servers.google.config import DEFAULT_ACCOUNT
    from mcp_tools.servers.google.tokens import TokenSlot
    from mcp_tools.state.errors import StateStoreError

    try:
        google = _google(config)
    except ConfigError as error:
        return [f"google:    {error}"]
    tools = enabled_tools(config)
    access = access_levels(config.sections)
    if google.service_account_file is not None:
        return [
            f"google:    service account {google.service_account_file}, acting as {google.subject}",
            "           scopes asked: " + ", ".join(short(s) for s in requested_scopes(tools, access)),
        ]
    if google.client_secrets is None:
        return ["google:    not set up: set [google] client_secrets (see docs/google.md)"]
    lines = []
    try:
        read_client_secrets(google.client_secrets)
    except Exception as error:
        lines.append(f"google:    {error}")
    try:
        env = environment(config)
        signed = signed_in(google, env)
    except (ConfigError, StateStoreError) as error:
        return [*lines, f"google:    the state store cannot be read: {error}"]
    try:
        data = TokenSlot(env, DEFAULT_ACCOUNT).read()
    except (LookupError, ValueError):
        return [*lines, f"google:    not signed in: run `{auth_command()}`", *_other_accounts(env, google, signed)]
    granted = data.get("scopes") or []
    expiry = data.get("expiry")
    if expiry:
        when = dt.datetime.fromisoformat(expiry)
        left = when - dt.datetime.now(dt.UTC)
        state = (
            "expired (refreshed on the next call)"
            if left.total_seconds() <= 0
            else f"{int(left.total_seconds() // 60)} min left"
        )
        expiry = f"{expiry} ({state})"
    lines.append(f"google:    signed in as {data.get('account') or 'unknown'}; token in the state store")
    lines.append("           granted: " + (", ".join(short(s) for s in granted) or "nothing"))
    lines.append(
        f"           access token expires: {expiry or 'unknown'}; refresh token: "
        f"{'stored' if data.get('refresh_token') else 'missing'}"
    )
    lacking = {tool: missing for tool in tools if (missing := _missing(tool, granted, access))}
    for tool, missing in lacking.items():
        shown = ", ".join(short(s) for s in missing)
        lines.append(f"           missing for {tool}: {shown} (run `{auth_command()}`)")
    return lines + _other_accounts(env, google, signed)


def _other_accounts(env: Any, google: GoogleConfig, signed: list[str]) -> list[str]:
    """A line for each account signed in under a label of its own (`auth google --account`)."""
    from mcp_tools.servers.google.config import DEFAULT_ACCOUNT
    from mcp_tools.servers.google.tokens import TokenSlot

    lines = []
    for label in signed:
        if label == DEFAULT_ACCOUNT:
            continue
        try:
            data = TokenSlot(env, label).read()
        except (LookupError, ValueError):
            lines.append(f"google:    account {label}: its token cannot be read (run `{auth_command(label)}`)")
            continue
        granted = ", ".join(short(s) for s in data.get("scopes") or []) or "nothing"
        lines.append(f"google:    account {label}: {data.get('account') or 'unknown'}; granted: {granted}")
    return lines
