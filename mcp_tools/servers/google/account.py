"""The signed-in Google account: its stored token, refreshing it, and signing in.

Tokens live in the state store (`mcp_tools.servers.google.tokens`), sealed under `[state] secret`
where one is set. An access token about to expire is refreshed before the call that needs it and the new one stored at
once, so nobody signs in again while the refresh token is good. A refused refresh token
(`invalid_grant`) becomes `not_configured` with the command that fixes it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.google.config import GoogleConfig, auth_command
from mcp_tools.util.net import is_loopback
from mcp_tools.util.secrets import known_secrets

if TYPE_CHECKING:
    from mcp_tools.servers.google.tokens import TokenSlot

REFRESH_MARGIN = dt.timedelta(minutes=5)
TESTING_NOTE = (
    "If the OAuth consent screen of your Google Cloud project is in 'Testing' status, Google drops "
    "its refresh tokens after 7 days: publish the app (In production) to keep them."
)


def reauth_hint(account: str | None = None) -> str:
    """What signs the account in again: `mcp-tools auth google` (with `--account LABEL` for another label)."""
    return f"Run `{auth_command(account)}` again. {TESTING_NOTE}"


class SignInError(Exception):
    """Signing in failed; the message says why, without secrets."""


def read_client_secrets(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or error
        raise SignInError(f"cannot read [google] client_secrets {path}: {reason}") from None
    section = data.get("installed") or data.get("web")
    if not isinstance(section, dict) or not section.get("client_id") or not section.get("client_secret"):
        raise SignInError(
            f"{path} is not an OAuth client file; create an OAuth client of type 'Desktop app' and download its JSON"
        )
    return section


def _expiry_text(expiry: dt.datetime | None) -> str | None:
    return expiry.replace(tzinfo=dt.UTC).isoformat() if expiry is not None else None


def _expiry_value(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    value = dt.datetime.fromisoformat(text)
    return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value  # google-auth wants naive UTC


class GoogleAccount:
    """The credentials every Google namespace uses; safe to share between threads."""

    def __init__(
        self,
        config: GoogleConfig,
        slot: TokenSlot | None,
        scopes: Sequence[str],
        label: str | None = None,
    ) -> None:
        self.config = config
        self.label = label  # the account's label (None: the one `mcp-tools auth google` signs in)
        self.slot = slot  # where its token is stored (None: a service account)
        self.scopes = list(scopes)  # what the enabled tools need (asked for by a service account)
        self._lock = threading.Lock()
        self._credentials: Any = None
        self._stored: dict[str, Any] = {}
        self._persisted_token: str | None = None
        self._loaded_stamp: int | None = None

    def __repr__(self) -> str:
        return f"GoogleAccount(label={self.label!r})"

    @property
    def is_service_account(self) -> bool:
        return self.config.service_account_file is not None

    # --- what doctor and the tools may know -------------------------------------------------
    def stored(self) -> dict[str, Any]:
        """The stored token (secrets included: never show them)."""
        if self.is_service_account or self.slot is None:
            return {}
        try:
            return self.slot.read()
        except (LookupError, ValueError):
            return {}

    def granted_scopes(self) -> list[str]:
        if self.is_service_account:
            return list(self.scopes)
        if self._stored and self._signed_in_again():
            return list(self.stored().get("scopes") or [])  # a new sign-in, not loaded until the next call
        return list(self._stored.get("scopes") or self.stored().get("scopes") or [])

    def email(self) -> str | None:
        if self.is_service_account:
            return self.config.subject
        return (self._stored or self.stored()).get("account")

    def secrets(self) -> list[str]:
        """Values that must never appear in a result, a log or an error."""
        found = [self._stored.get("refresh_token"), self._stored.get("client_secret"), self._persisted_token]
        if self._credentials is not None:
            found.append(getattr(self._credentials, "token", None))
            found.append(getattr(self._credentials, "client_secret", None))
        return [value for value in found if value]

    def redact(self, text: str) -> str:
        for value in self.secrets():
            text = text.replace(value, "[redacted]")
        return text

    # --- credentials ------------------------------------------------------------------------
    def credentials(self) -> Any:
        """Valid credentials, refreshed (and stored) when within five minutes of expiry."""
        with self._lock:
            if self._credentials is None or self._signed_in_again():
                self._credentials = self._load()
                self._loaded_stamp = self._stamp()
            credentials = self._credentials
            expiry = credentials.expiry
            soon = expiry is None or expiry - REFRESH_MARGIN <= dt.datetime.now(dt.UTC).replace(tzinfo=None)
            if not credentials.token or soon:
                self._refresh(credentials)
            known_secrets.add_all(self.secrets())  # scrubbed from every result, audit row and log line
            return credentials

    def _stamp(self) -> int | None:
        if self.is_service_account or self.slot is None:
            return None
        return self.slot.version()

    def _signed_in_again(self) -> bool:
        """The stored token changed while this server runs (`mcp-tools auth google`, another
        replica's refresh): use the new one."""
        return not self.is_service_account and self._stamp() != self._loaded_stamp

    def invalidate(self) -> None:
        """After a 401: the next call refreshes."""
        with self._lock:
            if self._credentials is not None:
                self._credentials.expiry = dt.datetime(2000, 1, 1)

    def persist_if_changed(self) -> None:
        """google-auth may refresh by itself after a 401; keep what it got."""
        with self._lock:
            credentials = self._credentials
            if credentials is not None and not self.is_service_account and credentials.token != self._persisted_token:
                self._persist(credentials)

    def _load(self) -> Any:
        if self.is_service_account:
            from google.oauth2 import service_account

            path = self.config.service_account_file
            assert path is not None
            try:
                # google-auth leaves this constructor unannotated
                return service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
                    str(path.expanduser()), scopes=self.scopes, subject=self.config.subject
                )
            except (OSError, ValueError) as error:
                raise ToolFailure(
                    "not_configured",
                    f"cannot use [google] service_account_file {path}: {type(error).__name__}",
                    "download a JSON key for the service account from the Google Cloud console",
                ) from None
        from google.oauth2.credentials import Credentials

        data = self.stored()
        if not data.get("refresh_token"):
            who = f"the Google account {self.label!r} is not signed in" if self.label else "not signed in to Google"
            raise ToolFailure("not_configured", who, f"Run `{auth_command(self.label)}`.")
        if data.get("client_id") and data.get("client_secret"):
            client = {"client_id": data["client_id"], "client_secret": data["client_secret"]}  # an imported sign-in
        elif self.config.client_secrets is None:
            raise ToolFailure(
                "not_configured", "[google] client_secrets is not set", f"set it, then run `{auth_command(self.label)}`"
            )
        else:
            try:
                client = read_client_secrets(self.config.client_secrets)
            except SignInError as error:
                raise ToolFailure("not_configured", str(error)) from None
        self._stored = data
        self._persisted_token = data.get("token")
        # google-auth leaves Credentials.__init__ unannotated
        credentials = Credentials(  # type: ignore[no-untyped-call]
            token=data.get("token"),
            refresh_token=data["refresh_token"],
            token_uri=data.get("token_uri") or client.get("token_uri") or "https://oauth2.googleapis.com/token",
            client_id=client["client_id"],
            client_secret=client["client_secret"],
            scopes=data.get("scopes"),
        )
        credentials.expiry = _expiry_value(data.get("expiry"))
        return credentials

    def _refresh(self, credentials: Any) -> None:
        import google.auth.exceptions
        import google_auth_httplib2
        import httplib2

        try:
            with insecure_loopback(getattr(credentials, "token_uri", "") or ""):
                credentials.refresh(google_auth_httplib2.Request(httplib2.Http(timeout=self.config.timeout_seconds)))
        except google.auth.exceptions.RefreshError as error:
            raise refresh_failure(error, self.is_service_account, self.label) from None
        except (OSError, httplib2.HttpLib2Error) as error:
            raise ToolFailure(
                "upstream_error",
                f"cannot reach Google's token endpoint ({type(error).__name__})",
                "check the network connection and retry",
            ) from None
        if not self.is_service_account:
            self._persist(credentials)

    def _persist(self, credentials: Any) -> None:
        data = dict(self._stored or self.stored())
        data.update(token=credentials.token, expiry=_expiry_text(credentials.expiry))
        assert self.slot is not None
        self._loaded_stamp = self.slot.write(data)
        self._stored = data
        self._persisted_token = credentials.token


def refresh_failure(error: Exception, service_account: bool = False, account: str | None = None) -> ToolFailure:
    """What a refused token request means; `account` (a label) names the account and its sign-in command."""
    text = str(error)
    whose = f"the stored sign-in of the Google account {account!r}" if account else "the stored sign-in"
    if service_account:
        return ToolFailure(
            "not_configured",
            "Google refused the service account's token request (" + text.split(":")[0][:60] + ")",
            "In the Workspace Admin console, grant the service account's client id domain-wide delegation "
            "for the scopes of the enabled tools, and check [google] subject.",
        )
    if "invalid_grant" in text:
        return ToolFailure("not_configured", f"Google no longer accepts {whose} (invalid_grant)", reauth_hint(account))
    if "invalid_client" in text or "unauthorized_client" in text:
        return ToolFailure(
            "not_configured",
            "Google refused the OAuth client in [google] client_secrets",
            f"download the client file again from the Google Cloud console, then run `{auth_command(account)}`",
        )
    return ToolFailure("upstream_error", "refreshing the Google token failed", "retry in a minute")


@contextmanager
def insecure_loopback(url: str) -> Iterator[None]:
    """oauthlib refuses plain http; a loopback token endpoint (a test server) is allowed."""
    host = urlsplit(url).hostname
    if not (url.startswith("http://") and is_loopback(host)):
        yield
        return
    previous = os.environ.get("OAUTHLIB_INSECURE_TRANSPORT")
    os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("OAUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = previous


# --- signing in (mcp-tools auth google) --------------------------------------------------------


class _CallbackServer(HTTPServer):
    """The loopback server Google sends the browser back to; `answer` is the query it brought."""

    answer: dict[str, str]


class _Callback(BaseHTTPRequestHandler):
    server: _CallbackServer

    def do_GET(self) -> None:
        query = {key: values[0] for key, values in parse_qs(urlsplit(self.path).query).items()}
        if "state" not in query:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.server.answer = query
        body = (
            b"<!doctype html><title>mcp-tools</title><p>Signed in to Google. You can close this window."
            if "code" in self.server.answer
            else b"<!doctype html><title>mcp-tools</title><p>Sign-in did not finish; see the terminal."
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def sign_in(
    config: GoogleConfig,
    save: Callable[[dict[str, Any]], Any],
    scopes: Sequence[str],
    *,
    no_browser: bool = False,
    open_url: Callable[[str], Any] | None = None,
    read_line: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    timeout_seconds: float = 300.0,
    profile: Callable[[Any], str | None] | None = None,
) -> dict[str, Any]:
    """The installed-app flow: PKCE, offline access, a loopback redirect on a free port.

    With `no_browser`, the URL is printed and the person pastes the address their browser
    was sent to (it fails to load on a headless machine; the code is in it).
    """
    from google_auth_oauthlib.flow import Flow

    if config.client_secrets is None:
        raise SignInError('set [google] client_secrets = "path/to/client_secret.json" first (see docs/google.md)')
    client = read_client_secrets(config.client_secrets)
    flow = Flow.from_client_config({"installed": client}, scopes=list(scopes), autogenerate_code_verifier=True)
    server: _CallbackServer | None = None
    if no_browser:
        port = _free_port()
    else:
        server = _CallbackServer(("127.0.0.1", 0), _Callback)
        server.timeout = timeout_seconds
        server.answer = {}
        port = int(server.server_address[1])
    flow.redirect_uri = f"http://127.0.0.1:{port}/"
    state = secrets.token_urlsafe(24)
    with insecure_loopback(client.get("auth_uri") or ""):
        url, _ = flow.authorization_url(access_type="offline", prompt="consent", state=state)
    try:
        if no_browser:
            say(f"Open this address in a browser, sign in, then paste the address it ends on:\n\n{url}\n")
            pasted = read_line("Address: ").strip()
            answer = {key: values[0] for key, values in parse_qs(urlsplit(pasted).query).items()}
        else:
            assert server is not None
            say(f"Opening the browser to sign in to Google. If it does not open, visit:\n\n{url}\n")
            if open_url is None:
                import webbrowser

                webbrowser.open(url, new=1)
            else:
                threading.Thread(target=open_url, args=(url,), daemon=True).start()
            deadline = time.monotonic() + timeout_seconds
            while not server.answer and time.monotonic() < deadline:
                server.timeout = max(0.1, deadline - time.monotonic())
                server.handle_request()  # a favicon or prefetch request does not end the wait
            answer = server.answer
            if not answer:
                raise SignInError(f"no answer from the browser within {int(timeout_seconds)} s; try again")
    finally:
        if server is not None:
            server.server_close()
    if answer.get("error"):
        raise SignInError(f"Google refused the sign-in: {answer['error'][:80]}")
    if answer.get("state") != state or not answer.get("code"):
        raise SignInError("the sign-in answer did not match this request (no code, or another state); try again")
    token_uri = client.get("token_uri") or ""
    try:
        with insecure_loopback(token_uri):
            token = flow.fetch_token(code=answer["code"])
    except Exception as error:
        raise SignInError(f"exchanging the code failed ({type(error).__name__}: {str(error)[:120]})") from None
    credentials = flow.credentials
    if not credentials.refresh_token:
        raise SignInError(
            "Google returned no refresh token; remove the app's access at "
            "https://myaccount.google.com/permissions and sign in again"
        )
    granted = token.get("scope") or list(scopes)
    granted = granted.split() if isinstance(granted, str) else list(granted)
    data = {
        "token": credentials.token,
        "refresh_token": credentials.refresh_token,
        "token_uri": token_uri,
        "client_id": client["client_id"],
        "scopes": sorted(granted),
        "expiry": _expiry_text(credentials.expiry),
        "account": None,
    }
    if profile is not None:
        try:
            data["account"] = profile(credentials)
        except Exception:  # the account name is for display only
            data["account"] = None
    save(data)
    return data
