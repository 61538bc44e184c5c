"""What the embedded authorization server takes from anyone on the internet, and how much of it.

`/register` and `/authorize` answer anonymous requests, and what they accept is stored beside the
approvals and the audit log. So every field has a length (the one its standard gives, or one no
real client comes near), a registration body and an authorization form are read only up to a
few KiB, each address may register only so many clients an hour, and `/authorize` refuses with
a page of its own (never a redirect) until the client and its redirect URI are known good and the
client has completed a consent once: until then its redirect URI is only what an anonymous party
registered, and redirecting there would make this server an open redirector.
"""

from __future__ import annotations

import html
import json
import re
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_tools.util.net import address_key, is_loopback

MAX_BODY_BYTES = 16_384  # a registration, or an authorization request sent as a form
MAX_URI = 2000  # a redirect URI, a client's web page, a Client ID Metadata Document's URL
MAX_HOST = 253  # DNS: a name of at most 253 characters, in labels of at most 63
MAX_LABEL = 63
MAX_REDIRECT_URIS = 10
MAX_NAME = 100
MAX_STATE = 1024
MAX_SCOPE = 1000
MAX_JWKS = 4096
CODE_CHALLENGE = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")  # RFC 7636 §4.2
VSCHAR = re.compile(r"^[\x20-\x7e]*$")  # RFC 6749 Appendix A: what state is made of
ADDRESSES = 10_000  # addresses the registration rate remembers; the least recent go first
REFUSED_SCHEMES = {"javascript", "data", "vbscript", "file", "blob", "about", "filesystem"}
TEXT_FIELDS = {
    "client_uri": MAX_URI,
    "logo_uri": MAX_URI,
    "tos_uri": MAX_URI,
    "policy_uri": MAX_URI,
    "jwks_uri": MAX_URI,
    "scope": MAX_SCOPE,
    "software_id": 200,
    "software_version": 200,
    "token_endpoint_auth_method": 64,
    "application_type": 16,
    "client_secret": 128,
}
LIST_FIELDS = {"grant_types": (4, 64), "response_types": (4, 64), "contacts": (5, 320)}
# What a registration keeps: what this server uses, and nothing an anonymous party could fill.
STORED_FIELDS = (
    "client_id",
    "client_secret",
    "client_id_issued_at",
    "client_secret_expires_at",
    "redirect_uris",
    "token_endpoint_auth_method",
    "grant_types",
    "response_types",
    "scope",
    "client_name",
    "client_uri",
)


@dataclass(frozen=True)
class Limits:
    """How much of each kind of row the embedded authorization server keeps (`[http.oauth]`)."""

    max_clients: int = 200
    unconsented_client_seconds: float = 86_400
    registrations_per_hour: int = 20
    max_pending_consents: int = 500
    max_pending_consents_per_client: int = 10

    @classmethod
    def of(cls, settings: Any) -> Limits:
        return cls(
            max_clients=settings.max_clients,
            unconsented_client_seconds=settings.unconsented_client_seconds,
            registrations_per_hour=settings.registrations_per_hour,
            max_pending_consents=settings.max_pending_consents,
            max_pending_consents_per_client=settings.max_pending_consents_per_client,
        )


# -- what a client may say about itself -------------------------------------------------------------


def name_problem(name: Any) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or len(name) > MAX_NAME:
        return f"client_name must be text of at most {MAX_NAME} characters"
    if any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs") for char in name):
        return "client_name must not hold control or formatting characters (line breaks, direction marks)"
    return None


def redirect_problem(uri: str) -> str | None:
    """Why a redirect URI is refused, or None: https (http only to this computer) or an app's own
    scheme; no user name, no fragment, a host DNS could hold."""
    if len(uri) > MAX_URI:
        return f"a redirect_uri is longer than {MAX_URI} characters"
    if any(char.isspace() or unicodedata.category(char) in ("Cc", "Cf") for char in uri):
        return "a redirect_uri holds spaces or control characters"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme or scheme in REFUSED_SCHEMES:
        return f"redirect_uri scheme {scheme!r} is not allowed"
    if parts.fragment or "#" in uri:
        return "a redirect_uri must not have a fragment (RFC 6749 §3.1.2)"
    if "@" in parts.netloc:
        return "a redirect_uri must not carry a user name (user@host hides the real host)"
    if scheme not in ("http", "https"):
        return None  # an application's own scheme (RFC 8252 §7.1): the device routes it
    host = parts.hostname or ""
    if not host:
        return "an http(s) redirect_uri needs a host"
    if len(host) > MAX_HOST or any(len(label) > MAX_LABEL for label in host.split(".")):
        return f"a redirect_uri host is longer than DNS allows ({MAX_HOST} characters, {MAX_LABEL} a label)"
    if scheme == "http" and not is_loopback(host):
        return "an http:// redirect_uri must be on this computer (127.0.0.1, [::1], localhost); use https"
    return None


def metadata_problem(info: Mapping[str, Any]) -> str | None:
    """Why a client's metadata (registered, or read from its document) is refused, field by field."""
    uris = info.get("redirect_uris") or []
    if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
        return f"register between 1 and {MAX_REDIRECT_URIS} redirect_uris"
    for uri in uris:
        problem = redirect_problem(str(uri))
        if problem is not None:
            return problem
    problem = name_problem(info.get("client_name"))
    if problem is not None:
        return problem
    for field, limit in TEXT_FIELDS.items():
        value = info.get(field)
        if value is not None and len(str(value)) > limit:
            return f"{field} is longer than {limit} characters"
    for field, (count, length) in LIST_FIELDS.items():
        values = info.get(field)
        if values is not None and (len(values) > count or any(len(str(value)) > length for value in values)):
            return f"{field}: at most {count} entries of at most {length} characters"
    jwks = info.get("jwks")
    if jwks is not None and len(json.dumps(jwks)) > MAX_JWKS:
        return f"jwks is larger than {MAX_JWKS} characters"
    return None


def stored(info: Mapping[str, Any]) -> dict[str, Any]:
    return {field: info[field] for field in STORED_FIELDS if info.get(field) is not None}


def authorize_problem(pairs: list[tuple[str, str]]) -> str | None:
    """Why an authorization request is refused before anything of it is looked up or kept."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return f"{key[:40]} is given more than once (RFC 6749 §3.1)"
        seen.add(key)
    params = dict(pairs)
    if not params.get("client_id"):
        return "client_id is missing"
    if len(params["client_id"]) > MAX_URI:
        return f"client_id is longer than {MAX_URI} characters"
    if params.get("response_type") != "code":
        return "response_type must be code"
    if "code_challenge" not in params:
        return "code_challenge is missing: PKCE with S256 is required"
    if params.get("code_challenge_method", "S256") != "S256":
        return "code_challenge_method must be S256"
    if not CODE_CHALLENGE.match(params["code_challenge"]):
        return "code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)"
    state = params.get("state", "")
    if len(state) > MAX_STATE or not VSCHAR.match(state):
        return f"state must be at most {MAX_STATE} printable ASCII characters"
    if len(params.get("scope", "")) > MAX_SCOPE:
        return f"scope is longer than {MAX_SCOPE} characters"
    for key in ("redirect_uri", "resource"):
        if len(params.get(key, "")) > MAX_URI:
            return f"{key} is longer than {MAX_URI} characters"
    return None


# -- registrations an address may make ---------------------------------------------------------------


class AddressRate:
    """At most `per_hour` events for each address in any hour, in bounded memory."""

    def __init__(self, per_hour: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_hour = per_hour
        self.clock = clock
        self.seen: OrderedDict[str, deque[float]] = OrderedDict()

    def take(self, address: str) -> float | None:
        """Counts one event and returns None, or returns the seconds until one more fits."""
        now = self.clock()
        window = self.seen.pop(address, None) or deque()
        while window and window[0] <= now - 3600:
            window.popleft()
        self.seen[address] = window
        while len(self.seen) > ADDRESSES:
            self.seen.popitem(last=False)
        if len(window) >= self.per_hour:
            return max(1.0, 3600 - (now - window[0]))
        window.append(now)
        return None

    def give_back(self, address: str) -> None:
        """An event that stored nothing (a refused registration) does not count."""
        window = self.seen.get(address)
        if window:
            window.pop()


# -- the endpoints, guarded ------------------------------------------------------------------------


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None when it is longer than `limit`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def guard_register(app: ASGIApp, rate: AddressRate) -> ASGIApp:
    """`/register`: a small body, and a rate per address; only registrations that stored a client count."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        body = await read_body(receive, MAX_BODY_BYTES)
        if body is None:
            refusal = f"a registration is at most {MAX_BODY_BYTES} bytes"
            await _json_error(413, "invalid_client_metadata", refusal)(scope, receive, send)
            return
        address = address_key(scope)
        wait = rate.take(address)
        if wait is not None:
            refusal = f"at most {rate.per_hour} registrations an hour from one address"
            response = _json_error(429, "too_many_requests", refusal, {"Retry-After": str(int(wait) + 1)})
            await response(scope, receive, send)
            return
        status = 0

        async def watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await app(scope, replay(body), watching)
        if status != 201:
            rate.give_back(address)

    return guarded


def guard_authorize(app: ASGIApp, server: Any, audit: Callable[[str], None]) -> ASGIApp:
    """`/authorize`: checks the request, its client and its redirect URI before the SDK's handler
    sees it, and keeps that handler from redirecting an error to a client that never completed
    a consent: a page says what is wrong instead."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "POST":
            body = await read_body(receive, MAX_BODY_BYTES)
            content_type = dict(scope.get("headers", [])).get(b"content-type", b"").decode("latin-1")
            if body is None or not content_type.startswith("application/x-www-form-urlencoded"):
                refusal = f"an authorization request is a form of at most {MAX_BODY_BYTES} bytes"
                await _refuse(refusal, audit)(scope, receive, send)
                return
            receive = replay(body)
            query = body.decode("latin-1")
        else:
            query = scope.get("query_string", b"").decode("latin-1")
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False, errors="strict")
        except UnicodeDecodeError:
            pairs = None
        problem = "the request is not valid UTF-8" if pairs is None else authorize_problem(pairs)
        if problem is None:
            problem = await _client_problem(server, dict(pairs or []))
        if problem is not None:
            await _refuse(problem, audit)(scope, receive, send)
            return
        client_id = dict(pairs or [])["client_id"]
        if server.has_consented(client_id):
            await app(scope, receive, send)
            return
        await app(scope, receive, _no_error_redirect(send, server.consent_url, audit))

    return guarded


async def _client_problem(server: Any, params: dict[str, str]) -> str | None:
    from mcp.shared.auth import InvalidRedirectUriError
    from pydantic import AnyUrl, ValidationError

    client = await server.get_client(params["client_id"])
    if client is None:
        return "unknown client_id (registrations that never completed a consent expire)"
    try:
        uri = AnyUrl(params["redirect_uri"]) if "redirect_uri" in params else None
        client.validate_redirect_uri(uri)
    except (ValidationError, InvalidRedirectUriError):
        return "redirect_uri is not one the client registered"
    return None


def _no_error_redirect(send: Send, consent_url: str, audit: Callable[[str], None]) -> Send:
    """Passes the consent redirect on; turns any other redirect (an error) into a page."""
    swallowing = False

    async def sending(message: Message) -> None:
        nonlocal swallowing
        if message["type"] == "http.response.start" and 300 <= int(message["status"]) < 400:
            location = dict(message.get("headers", [])).get(b"location", b"").decode("latin-1")
            if not location.startswith(consent_url + "/"):
                from urllib.parse import parse_qs

                query = parse_qs(urlsplit(location).query)
                reason = (query.get("error_description") or query.get("error") or ["refused"])[0]
                page = _refuse(reason, audit)
                swallowing = True
                await page({"type": "http"}, replay(b""), send)
                return
        if swallowing:
            return
        await send(message)

    return sending


def _refuse(reason: str, audit: Callable[[str], None]) -> Response:
    """A page for the person whose browser brought the request (audited here: it is no JSON)."""
    audit(f"/authorize: {reason[:300]}")
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused · mcp-tools</title>'
        "</head><body><h1>This sign-in request was refused</h1>"
        f'<p class="error">{html.escape(reason[:500])}</p>'
        "<p>Nothing was sent back to the application. Start signing in again from the application.</p>"
        "</body></html>"
    )
    headers = {"Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'"}
    return HTMLResponse(page, status_code=400, headers=headers)


def _json_error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": error, "error_description": description}, status_code=status, headers=headers)
