"""Connecting a principal's own Google account from a hosted client, with no loopback port or copy-paste.

A principal of `[http.oauth]` (an outside issuer) that calls a Google tool with no account gets a
sign-in link: Google's consent for the OAuth client of `[google] client_secrets`, with PKCE (S256)
and a single-use `state` kept in the state store beside the principal it was made for and the
PKCE verifier (sealed). Google sends the browser back to the server's own `/google/callback`
(`mcp_tools.transports.google_callback`), which takes the state once, exchanges the code with the
verifier, and stores the token as that principal's, with the account's address where the granted
scopes let Gmail's `users.getProfile` tell it (else none). A state replayed, forged or expired finds
nothing; a code from another sign-in (another principal's) does not exchange with this verifier.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import logging
import secrets
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.google.labels import DEFAULT_ACCOUNT

logger = logging.getLogger("mcp_tools.google")
TTL_SECONDS = 600.0  # how long a sign-in link works
GOOGLE_AUTH_URI = "https://accounts.google.com/o/oauth2/auth"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
GMAIL_ROOT = "https://gmail.googleapis.com/"
# the scopes Gmail's users.getProfile accepts (its discovery document): one of them names the address
PROFILE_SCOPES = frozenset(
    {
        "https://mail.google.com/",
        "https://www.googleapis.com/auth/gmail.compose",
        "https://www.googleapis.com/auth/gmail.metadata",
        "https://www.googleapis.com/auth/gmail.modify",
        "https://www.googleapis.com/auth/gmail.readonly",
    }
)


class SignInRefused(Exception):
    """The callback cannot finish a sign-in; the message says why, without secrets."""


def _digest(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest()


def _client(config: Any) -> dict[str, Any] | None:
    from mcp_tools.servers.google.account import SignInError, read_client_secrets

    if config.client_secrets is None:
        return None
    try:
        return read_client_secrets(config.client_secrets)
    except SignInError:
        return None


def sign_in_link(
    config: Any, env: Environment, principal: str, scopes: Sequence[str], label: str = DEFAULT_ACCOUNT
) -> str | None:
    """Google's consent address for `principal` to connect an account under `label`; None where
    this server cannot offer one (no address of its own, no OAuth client)."""
    from mcp_tools.servers.google.tokens import vault

    client = _client(config)
    if env.google_callback is None or client is None:
        return None
    state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "client_id": client["client_id"],
        "redirect_uri": env.google_callback,
        "response_type": "code",
        "scope": " ".join(sorted(scopes)),
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "access_type": "offline",
        "prompt": "consent",
    }
    link = f"{client.get('auth_uri') or GOOGLE_AUTH_URI}?{urlencode(query)}"
    tokens = vault(env)
    # sealed with the verifier: the approvals page shows the link again to the same principal
    sealed = tokens.sealed_text({"verifier": verifier, "scopes": sorted(scopes), "link": link})
    tokens.store.begin_google_sign_in(_digest(state), principal, label, sealed, TTL_SECONDS)
    return link


def pending_links(env: Environment, principal: str) -> list[tuple[str, str, float]]:
    """(label, link, expires) of the sign-ins `principal` may still finish, the newest first: what
    the approvals page shows to a person signed in to it as that principal, and to nobody else."""
    from mcp_tools.servers.google.tokens import vault

    tokens = vault(env)
    found = []
    for label, sealed, expires in tokens.store.google_sign_ins_of(principal):
        try:
            link = tokens.open(sealed).get("link")
        except ValueError:
            continue  # sealed under another [state] secret: not this server's to show
        if isinstance(link, str) and link:
            found.append((label, link, expires))
    return found


def finish(config: Any, env: Environment, state: str, code: str | None) -> tuple[str, str]:
    """Take the sign-in `state` names (once) and, with `code`, store its principal's token;
    (principal, label). Blocking: run it in a worker thread."""
    from mcp_tools.servers.google.tokens import TokenSlot, vault

    tokens = vault(env)
    found = tokens.store.take_google_sign_in(_digest(state)) if state else None
    if found is None:
        raise SignInRefused("this sign-in link is unknown, already used or expired: ask for a new one")
    principal, label, sealed = found
    if not code:
        raise SignInRefused("Google did not sign you in; ask for a new link to try again")
    client = _client(config)
    if client is None or env.google_callback is None:
        raise SignInRefused("this server has no Google OAuth client set up")
    try:
        pending = tokens.open(sealed)
    except ValueError:
        raise SignInRefused("this sign-in cannot be finished here (another [state] secret)") from None
    token_uri = client.get("token_uri") or GOOGLE_TOKEN_URI
    answer = _exchange(token_uri, client, code, str(pending["verifier"]), env.google_callback)
    refresh = answer.get("refresh_token")
    if not isinstance(refresh, str) or not refresh:
        raise SignInRefused(
            "Google returned no refresh token; remove the app's access in your Google account and retry"
        )
    granted = answer.get("scope")
    scopes = sorted(granted.split() if isinstance(granted, str) else pending.get("scopes") or [])
    lifetime = answer.get("expires_in")
    TokenSlot(env, label, principal).write(
        {
            "token": answer.get("access_token"),
            "refresh_token": refresh,
            "token_uri": token_uri,
            "client_id": client["client_id"],
            "scopes": scopes,
            "expiry": (
                dt.datetime.now(dt.UTC) + dt.timedelta(seconds=lifetime if isinstance(lifetime, int) else 3600)
            ).isoformat(),
            "account": address(config, str(answer["access_token"]), scopes),
        }
    )
    return principal, label


def address(config: Any, access_token: str, scopes: Sequence[str]) -> str | None:
    """The address of the account `access_token` acts as, from Gmail's `users.getProfile` (as
    `mcp-tools auth google` learns it); None when the scopes do not allow that call or it fails:
    the address is for naming the account only, and a sign-in never fails for want of it."""
    if not PROFILE_SCOPES & set(scopes):
        return None
    root = (config.api_endpoint or GMAIL_ROOT).rstrip("/")
    request = urllib.request.Request(f"{root}/gmail/v1/users/me/profile", method="GET")
    request.add_header("Authorization", f"Bearer {access_token}")
    try:
        with urllib.request.urlopen(request, timeout=min(float(config.timeout_seconds), 30.0)) as response:
            found = json.loads(response.read()).get("emailAddress")
    except (OSError, ValueError, AttributeError) as error:
        logger.info("the connected Google account's address is not known (%s)", type(error).__name__)
        return None
    return found if isinstance(found, str) and "@" in found and len(found) <= 320 else None


def _exchange(token_uri: str, client: dict[str, Any], code: str, verifier: str, redirect: str) -> dict[str, Any]:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect,
        "client_id": client["client_id"],
        "client_secret": client["client_secret"],
    }
    request = urllib.request.Request(token_uri, data=urlencode(form).encode(), method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise SignInRefused(f"Google refused the sign-in (status {error.code}); ask for a new link") from None
    except (OSError, ValueError) as error:
        raise SignInRefused(f"cannot reach Google's token endpoint ({type(error).__name__})") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
        raise SignInRefused("Google's token endpoint answered without a token")
    return answer
