"""What anyone on the network may take of `serve --http`, and what they never can.

Paths come in three kinds:

- `/healthz` and `/readyz`: answered at once, their body never read, no limit (load balancers
  poll them; `/readyz` shares one state-store check among the requests that arrive together).
- Paths open to anyone (the OAuth endpoints and metadata, the approvals page, the Telegram
  webhook): from one client address at most `public_requests_per_minute` (a token bucket) and
  `public_requests_per_address` at once (429), from all addresses together `public_max_requests`
  at once (503); the approvals page's long poll without a body holds no place (the rate counts it).
  The body is read here, whole, before the route sees it: at most `public_max_body_bytes` (413)
  within `body_timeout_seconds` (408), counted from when the head is in, however slowly the
  bytes trickle.
- Every other path needs a token. Its body has the same deadline (except a streamed text call,
  whose reply arrives while the model writes it), and once the token is accepted the request
  takes one of `max_requests` places (`BusyLimit`), which no anonymous request ever holds.

The client address is the connection's peer, or what `X-Forwarded-For` says when the peer is
one of `trusted_proxies` (uvicorn reads it then, `http_server.serve`). IPv6 clients are counted
per /64, the block one subscriber usually holds. The per-address state is bounded: the least
recently seen addresses are forgotten first.
"""

from __future__ import annotations

import ipaddress
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_tools.util.net import address_key

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from mcp_tools.core.config import HttpSettings

HEALTH_PATHS = ("/healthz", "/readyz")
# The approvals page's long poll: it answers at once without a session, and with one waits up to
# ten seconds for a change; each open tab keeps one, so without a body it holds no place.
LONG_POLLS = ("/approvals/fragment",)
BODY_HEADERS = (b"content-length", b"transfer-encoding")
MAX_ADDRESSES = 10_000  # per-address budgets kept (about 1 MB); the least recently seen go first
# Past these, an exposed server is said to be without the limit that matters (`mcp-tools doctor`).
EXPOSED_LIMITS = {
    "header_timeout_seconds": 30,
    "body_timeout_seconds": 60,
    "public_requests_per_minute": 600,
    "public_requests_per_address": 16,
}


@dataclass
class Load:
    """Requests running now: of token holders (`max_requests` places) and on the public paths."""

    max_requests: int
    public_max_requests: int
    running: int = 0
    public_running: int = 0

    def saturated(self) -> bool:
        """Every place for token holders is taken: a load balancer should send calls elsewhere."""
        return self.running >= self.max_requests


class AddressBudgets:
    """Per client address: a token bucket of `per_minute` requests, and how many run at once."""

    def __init__(
        self,
        per_minute: int,
        at_once: int,
        entries: int = MAX_ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_minute = per_minute
        self.at_once = at_once
        self.entries = entries
        self.clock = clock
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address: (tokens, when)
        self.running: dict[str, int] = {}  # only addresses with a request running; at most the public places

    def take(self, key: str) -> tuple[str, int] | None:
        """None when the address may start one more request (it is counted); else why not, and
        the seconds to wait."""
        if self.running.get(key, 0) >= self.at_once:
            return f"at most {self.at_once} requests at once from one address", 1
        refused = self.spend(key)
        if refused is None:
            self.running[key] = self.running.get(key, 0) + 1
        return refused

    def spend(self, key: str) -> tuple[str, int] | None:
        """None when the address's minute has room for one more request (it is counted)."""
        now = self.clock()
        tokens, when = self.buckets.pop(key, (float(self.per_minute), now))
        tokens = min(float(self.per_minute), tokens + (now - when) * self.per_minute / 60)
        refused = tokens < 1
        self.buckets[key] = (tokens if refused else tokens - 1, now)
        while len(self.buckets) > self.entries:
            self.buckets.popitem(last=False)
        if refused:
            wait = math.ceil((1 - tokens) * 60 / self.per_minute)
            return f"at most {self.per_minute} requests a minute from one address", max(1, wait)
        return None

    def release(self, key: str) -> None:
        left = self.running.get(key, 0) - 1
        if left > 0:
            self.running[key] = left
        else:
            self.running.pop(key, None)


async def answer(
    send: Send, status: int, body: dict[str, Any], retry_after: int | None = None, close: bool = False
) -> None:
    """A JSON answer; what is still coming of the request is read only within the limits of
    `http_server` (the head deadline, a megabyte), or not at all with `close`."""
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def streamed_text_call(scope: Scope) -> bool:
    """`POST /text-calls?stream=1`: its body is a model's reply, sent while it is written."""
    if scope["path"] != "/text-calls":
        return False
    from urllib.parse import parse_qs

    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return any(value in ("1", "true") for value in query.get("stream", []))


class Admission:
    """Outermost: the public paths' budgets and bodies, and every body's deadline."""

    def __init__(self, app: ASGIApp, settings: HttpSettings, is_public: Callable[[str], bool], load: Load) -> None:
        self.app = app
        self.is_public = is_public
        self.load = load
        self.body_timeout = settings.body_timeout_seconds
        self.max_body = settings.public_max_body_bytes
        self.budgets = AddressBudgets(settings.public_requests_per_minute, settings.public_requests_per_address)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in HEALTH_PATHS:
            await self.app(scope, receive, send)
        elif self.is_public(scope["path"]):
            await self.public(scope, receive, send)
        elif streamed_text_call(scope):
            await self.app(scope, receive, send)
        else:
            await self.with_body_deadline(scope, receive, send)

    async def public(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] in LONG_POLLS and not any(name in BODY_HEADERS for name, _ in scope["headers"]):
            # it waits only for a signed-in person, and has no body to stall: no place is held
            wait = self.budgets.spend(address_key(scope))
            if wait is not None:
                await answer(send, 429, {"error": "rate_limited", "message": wait[0]}, wait[1])
                return
            await self.app(scope, receive, send)
            return
        if self.load.public_running >= self.load.public_max_requests:
            message = f"the server is handling {self.load.public_max_requests} requests on its public paths"
            await answer(send, 503, {"error": "busy", "message": message + "; try again shortly"}, 1)
            return
        key = address_key(scope)
        refused = self.budgets.take(key)
        if refused is not None:
            await answer(send, 429, {"error": "rate_limited", "message": refused[0]}, refused[1])
            return
        self.load.public_running += 1
        try:
            body = await self.read_body(scope, receive, send)
            if body is not None:
                await self.app(scope, replay(body, receive), send)
        finally:
            self.load.public_running -= 1
            self.budgets.release(key)

    async def read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body; None when it was refused here (413, 408) or the client left."""
        import anyio

        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self.too_large(send)
            return None
        with anyio.move_on_after(self.body_timeout):
            body, whole = await read_at_most(receive, self.max_body)
            if not whole and len(body) > self.max_body:
                await self.too_large(send)
            return body if whole else None
        await self.too_slow(send)
        return None

    async def too_large(self, send: Send) -> None:
        message = f"this path takes bodies of at most {self.max_body} bytes ([http] public_max_body_bytes)"
        await answer(send, 413, {"error": "too_large", "message": message})

    async def too_slow(self, send: Send) -> None:
        message = f"the request body did not arrive within {self.body_timeout:g} s ([http] body_timeout_seconds)"
        await answer(send, 408, {"error": "timeout", "message": message}, close=True)

    async def with_body_deadline(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app as it is, but a body not whole within the deadline ends the request with 408:
        the app is told the client left, and what it answers then is dropped."""
        import anyio

        deadline = anyio.current_time() + self.body_timeout
        whole = timed_out = started = False

        async def timed_receive() -> Message:
            nonlocal whole, timed_out
            if timed_out:
                return {"type": "http.disconnect"}
            if whole:
                return await receive()
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                message = await receive()
                whole = message["type"] != "http.request" or not message.get("more_body", False)
                return message
            timed_out = True
            return {"type": "http.disconnect"}

        async def watched_send(message: Message) -> None:
            nonlocal started
            if timed_out:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, timed_receive, watched_send)
        except Exception:
            if not timed_out:
                raise
        if timed_out and not started:
            await self.too_slow(send)


async def read_at_most(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The body, and whether it is whole: False when it grew past `limit` (read no further) or the
    client went away first."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            return b"".join(chunks), False
        if not message.get("more_body", False):
            return b"".join(chunks), True


def replay(body: bytes, receive: Receive) -> Receive:
    """Hands the app the body read, then whatever else comes (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


class BusyLimit:
    """At most `max_requests` requests of token holders at once; more get 503 with Retry-After.

    It runs after the token is accepted, so anonymous requests never hold these places (the
    public paths have their own, `Admission`). Long-lived requests (an MCP client's event
    stream, a streamed text-call reply) hold their place while they last.
    """

    def __init__(self, app: ASGIApp, load: Load, is_public: Callable[[str], bool]) -> None:
        self.app = app
        self.load = load
        self.is_public = is_public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in HEALTH_PATHS or self.is_public(scope["path"]):
            await self.app(scope, receive, send)
            return
        if self.load.running >= self.load.max_requests:
            from starlette.responses import JSONResponse

            limit = self.load.max_requests
            body = {"error": "busy", "message": f"the server is handling {limit} requests; try again shortly"}
            await JSONResponse(body, status_code=503, headers={"Retry-After": "1"})(scope, receive, send)
            return
        self.load.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.load.running -= 1


def exposure_warnings(settings: HttpSettings) -> list[str]:
    """What an operator should hear before serving beyond loopback (or behind a proxy, which
    `allowed_hosts` or `trusted_proxies` tell) with these settings."""
    from mcp_tools.util.net import is_loopback

    behind_proxy = bool(settings.allowed_hosts or settings.trusted_proxies)
    if is_loopback(settings.host) and not behind_proxy:
        return []
    where = f"listening on {settings.host}" if not is_loopback(settings.host) else "behind a proxy"
    warnings = []
    for name, most in EXPOSED_LIMITS.items():
        value = getattr(settings, name)
        if value > most:
            warnings.append(
                f"[http] {name} = {value:g} while {where}: above {most}, a few connections from anyone hold "
                "the server longer (docs/http.md#exposing-the-server-to-the-internet)"
            )
    if settings.public_max_requests >= settings.max_requests:
        warnings.append(
            f"[http] public_max_requests ({settings.public_max_requests}) is not below max_requests "
            f"({settings.max_requests}): anonymous requests may run as many at once as signed-in ones"
        )
    if settings.oauth is not None and settings.oauth.calls_per_minute is None:
        warnings.append("[http.oauth] calls_per_minute is unset: each principal may call tools without limit")
    for proxy in settings.trusted_proxies:
        if ipaddress.ip_network(proxy, strict=False).prefixlen == 0:
            warnings.append(
                f"[http] trusted_proxies holds {proxy}: every client may name its own address in X-Forwarded-For, "
                "so no per-address limit holds"
            )
    if is_loopback(settings.host) and settings.allowed_hosts and not settings.trusted_proxies:
        warnings.append(
            "[http] trusted_proxies is empty while a proxy on this machine forwards to it (allowed_hosts): every "
            "client counts as the proxy's one address, so they share one per-address budget; name the proxy there"
        )
    return warnings
