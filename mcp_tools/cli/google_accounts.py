"""`mcp-tools auth google --import FILE`, `--list` and `--remove LABEL`: the signed-in accounts.

Nothing here prints a token or a client secret: the lines name labels, addresses, scopes and
whether Google still takes the refresh token.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp_tools.core.config import Config
from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.google.config import DEFAULT_ACCOUNT, GoogleConfig, auth_command
from mcp_tools.servers.google.scopes import short

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
REQUIRED = ("client_id", "client_secret", "refresh_token")


class ImportRefused(Exception):
    """The authorized-user file cannot be used; the message says what is wrong with it."""


_OPENED: dict[int, tuple[Config, Environment]] = {}


def environment(config: Config) -> Environment:
    """The Google namespaces' environment for this config, over its state store (opened once)."""
    opened = _OPENED.get(id(config))
    if opened is not None and opened[0] is config:
        return opened[1]
    import atexit

    from mcp_tools.state import open_state_store

    store = open_state_store(config)
    atexit.register(store.close)  # a PostgreSQL pool's connections end with the command
    made = Environment(
        config.data_dir(),
        config.state_dir(),
        config.environ,
        sections=config.sections,
        state_secret=config.state_secret(),
        state_store=store,
    )
    _OPENED[id(config)] = (config, made)
    return made


def read_authorized_user(path: Path) -> dict[str, str]:
    """The fields of an authorized-user JSON file (as google-auth writes it), checked."""
    try:
        data = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as error:
        raise ImportRefused(f"cannot read {path}: {error.strerror or error}") from None
    except ValueError:
        raise ImportRefused(f"{path} is not JSON") from None
    if not isinstance(data, dict):
        raise ImportRefused(f"{path} holds no JSON object")
    kind = data.get("type")
    if kind == "service_account":
        raise ImportRefused(f"{path} is a service-account key: set [google] service_account_file to it instead")
    if "installed" in data or "web" in data:
        raise ImportRefused(
            f"{path} is an OAuth client file, not a sign-in: set [google] client_secrets to it and run "
            f"`{auth_command()}`"
        )
    if kind not in (None, "authorized_user"):
        raise ImportRefused(f"{path} has type {str(kind)[:40]!r}; an authorized-user file has 'authorized_user'")
    missing = [name for name in REQUIRED if not isinstance(data.get(name), str) or not data[name].strip()]
    if missing:
        raise ImportRefused(f"{path} lacks {', '.join(missing)} (an authorized-user file has {', '.join(REQUIRED)})")
    token_uri = data.get("token_uri") or GOOGLE_TOKEN_URI
    if not isinstance(token_uri, str):
        raise ImportRefused(f"{path}: token_uri must be a string")
    parts = urlsplit(token_uri)
    from mcp_tools.util.net import is_loopback

    if not (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname))) or not parts.hostname:
        raise ImportRefused(f"{path}: token_uri must be an https address such as {GOOGLE_TOKEN_URI}")
    found = {name: data[name].strip() for name in REQUIRED}
    found["token_uri"] = token_uri
    if isinstance(data.get("account"), str) and "@" in data["account"]:
        found["account"] = data["account"].strip()
    return found


def _first_refresh(found: dict[str, str], timeout: float) -> dict[str, Any]:
    """Google's answer to one refresh with the file's token: it must take it before it is stored."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    form = {
        "grant_type": "refresh_token",
        "client_id": found["client_id"],
        "client_secret": found["client_secret"],
        "refresh_token": found["refresh_token"],
    }
    request = urllib.request.Request(found["token_uri"], data=urlencode(form).encode(), method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        try:
            reason = str(json.loads(error.read() or b"{}").get("error", ""))[:60]
        except ValueError:
            reason = ""
        meaning = {
            "invalid_grant": "the refresh token was revoked or has expired",
            "invalid_client": "the client_id and client_secret do not belong together",
            "unauthorized_client": "the OAuth client may not use this refresh token",
        }.get(reason, f"status {error.code}")
        raise ImportRefused(f"Google did not take the refresh token ({reason or 'refused'}: {meaning})") from None
    except (OSError, ValueError) as error:
        raise ImportRefused(f"cannot reach the token_uri ({type(error).__name__})") from None
    if not isinstance(answer.get("access_token"), str):
        raise ImportRefused("the token_uri answered without an access token")
    return answer


def import_account(
    config: Config, google: GoogleConfig, label: str, source: Path, say: Callable[[str], None], profile: Any
) -> int:
    """Store an authorized-user file as `label`, once Google has taken its refresh token."""
    import datetime as dt

    from mcp_tools.servers.google.tokens import TokenSlot

    try:
        found = read_authorized_user(source)
        answer = _first_refresh(found, google.timeout_seconds)
    except ImportRefused as error:
        print(f"mcp-tools: {source}: {error}", file=sys.stderr)
        return 1 if str(error).startswith(("Google did not", "cannot reach", "the token_uri")) else 2
    granted = sorted(str(answer.get("scope") or "").split())
    lifetime = answer.get("expires_in")
    seconds = lifetime if isinstance(lifetime, int) else 3600
    data: dict[str, Any] = {
        "token": answer["access_token"],
        "refresh_token": found["refresh_token"],
        "token_uri": found["token_uri"],
        "client_id": found["client_id"],
        "client_secret": found["client_secret"],
        "scopes": granted,
        "expiry": (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat(),
        "account": found.get("account"),
    }
    if not data["account"] and profile is not None and any("/gmail." in scope for scope in granted):
        from google.oauth2.credentials import Credentials

        try:
            # google-auth leaves Credentials.__init__ unannotated
            data["account"] = profile(Credentials(token=answer["access_token"]))  # type: ignore[no-untyped-call]
        except Exception:  # the address is for display only
            data["account"] = None
    TokenSlot(environment(config), label).write(data)
    shown = data["account"] or "an unknown address"
    say(f"Imported {label} ({shown}); granted: {', '.join(short(s) for s in granted) or 'nothing'}.")
    return 0


def list_accounts(config: Config, google: GoogleConfig, say: Callable[[str], None]) -> int:
    """Each account: its label, address, the scopes granted, and whether Google takes its refresh token."""
    from mcp_tools.servers.google.account import GoogleAccount
    from mcp_tools.servers.google.accounts import labels
    from mcp_tools.servers.google.tokens import TokenSlot

    env = environment(config)
    known = labels(google, env)
    if not known:
        say(f"No Google account is signed in: run `{auth_command()}`.")
        return 0
    default = google.default_account or (known[0] if len(known) == 1 else DEFAULT_ACCOUNT)
    for label in known:
        slot = TokenSlot(env, label)
        try:
            data = slot.read()
        except (LookupError, ValueError):
            say(f"{label}: not signed in (run `{auth_command(label)}`)")
            continue
        account = GoogleAccount(google, slot, [], None if label == DEFAULT_ACCOUNT else label)
        try:
            account.credentials()
            account.invalidate()
            account.credentials()  # a refresh now: the refresh token still works
            state = "refresh token works"
        except ToolFailure as failure:
            state = f"refresh token refused: {failure.message}" + (f" ({failure.hint})" if failure.hint else "")
        marker = " (default)" if label == default else ""
        say(f"{label}{marker}: {data.get('account') or 'unknown address'}; {state}")
        say("    scopes: " + (", ".join(short(s) for s in data.get("scopes") or []) or "none"))
    return 0


def remove_account(config: Config, google: GoogleConfig, label: str, say: Callable[[str], None]) -> int:
    """Revoke the account's refresh token at Google, then forget it here."""
    from mcp_tools.servers.google.config import signed_in
    from mcp_tools.servers.google.tokens import TokenSlot

    env = environment(config)
    if label not in signed_in(google, env):
        print(f"mcp-tools: no Google account {label!r} is signed in here", file=sys.stderr)
        return 2
    slot = TokenSlot(env, label)
    try:
        data = slot.read()
    except (LookupError, ValueError):
        data = {}
    revoked = _revoke(str(data.get("refresh_token") or ""), str(data.get("token_uri") or GOOGLE_TOKEN_URI))
    slot.forget()
    if revoked is None:
        say(f"Removed {label} ({data.get('account') or 'unknown address'}); Google revoked its access.")
        return 0
    say(
        f"Removed {label} here, but Google did not confirm the revocation ({revoked}): remove the app's access "
        "at https://myaccount.google.com/permissions"
    )
    return 1


def _revoke(refresh_token: str, token_uri: str) -> str | None:
    """None when Google revoked the token; else why not (in words without the token)."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    if not refresh_token:
        return "no refresh token was stored"
    url = token_uri.rsplit("/", 1)[0] + "/revoke"
    request = urllib.request.Request(url, data=urlencode({"token": refresh_token}).encode(), method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=30):
            return None
    except urllib.error.HTTPError as error:
        return f"status {error.code}" + (" (already revoked or expired)" if error.code == 400 else "")
    except OSError as error:
        return f"cannot reach Google ({type(error).__name__})"
