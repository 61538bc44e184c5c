"""Serving the HTTP app with uvicorn, so that no one can starve it of connections.

Anyone who can reach the port can open connections before any token is checked. Left alone,
a few hundred idle or slowly-typed connections use up the process's file descriptors and
nothing, not even `/healthz`, is accepted any more. So each connection must send a complete
request head within `header_timeout_seconds` (on a new connection and between requests), an
idle keep-alive connection is closed after `keep_alive_seconds`, and at most `max_connections`
stay open (never more than the descriptor limit leaves room for): beyond it the connection
that has waited longest without a request is closed to make room, and when every one is busy
the newcomer gets 503. A connection answered before its request body is in (a refusal, a 413)
reads the rest only within the head deadline and up to its drain allowance, then is closed. How many
requests run at once, and how long a body may take, is decided in the app (`http_limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Iterator
from typing import Any, cast

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcp_tools.core.config import HttpSettings

logger = logging.getLogger("mcp_tools.http")
# Descriptors kept for everything but client connections: the policy database, logs, outbound
# requests, the namespaces' own files and sockets.
RESERVED_DESCRIPTORS = 64
# The listen backlog, which is also how many connections asyncio accepts in one go before any
# of them can be looked at (at most; less under a low descriptor limit, see `accept_burst`).
ACCEPT_BURST = 64
MIN_ACCEPT_BURST = 16
# Bursts that can hold descriptors beyond the open connections: asyncio accepts a burst in one
# turn of its loop, makes each connection's transport in the next and calls `connection_made`
# (where an extra one closes the oldest idle one) in the turn after; the closed one's descriptor
# is freed one turn later still. Meanwhile a burst can be accepted in each of those turns.
BURSTS_IN_FLIGHT = 3
MIN_CONNECTIONS = 8
# Of a body still coming after its answer, read and dropped at most (or twice `max_body_bytes`,
# if more): a client that sent a whole body well past the limit still reads its 413, not a reset
# (an HTTP client reads the answer only once its body is sent, and closing with unread data resets
# the connection). The head deadline bounds the time it may take.
DRAIN_BYTES = 16 * 1024 * 1024
BUSY_BODY = json.dumps({"error": "busy", "message": "too many open connections; try again shortly"}).encode()
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
    b"connection: close\r\ncontent-length: " + str(len(BUSY_BODY)).encode() + b"\r\n\r\n" + BUSY_BODY
)


def descriptor_limit() -> int | None:
    """The process's soft limit on open descriptors; None where there is none to fit."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def accept_burst() -> int:
    """The listen backlog: 64, or an eighth of a low descriptor limit (256 on macOS), so that the
    bursts in flight leave room for connections that stay open."""
    soft = descriptor_limit()
    return ACCEPT_BURST if soft is None else max(MIN_ACCEPT_BURST, min(ACCEPT_BURST, soft // 8))


def connection_cap(configured: int) -> int:
    """`max_connections`, lowered to what the process's descriptor limit leaves room for."""
    soft = descriptor_limit()
    if soft is None:
        return configured
    room = soft - RESERVED_DESCRIPTORS - BURSTS_IN_FLIGHT * accept_burst()
    return max(MIN_CONNECTIONS, min(configured, room))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a request-head deadline and a cap on open connections."""

    header_timeout: float = 10.0
    max_connections: int = 256
    drain_bytes: int = DRAIN_BYTES

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        no_delay(transport)
        super().connection_made(transport)
        self._head_deadline: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None
        self._answered_early: Any = None  # the request answered before its body was in
        self._drained = 0
        self._wait_for_head()
        if len(self.connections) > self.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._draining():  # the rest of an answered request's body: read and dropped, within limits
            self._drained += len(data)
            if self._drained > self.drain_bytes:
                self._stop_waiting()
                self.transport.close()
            return
        if self.conn.their_state is not h11.IDLE:  # the request head is in
            self._stop_waiting()

    def _draining(self) -> bool:
        answered = self._answered_early
        return answered is not None and answered is self.cycle and self.conn.their_state is h11.SEND_BODY

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.SEND_BODY:
            # Answered before the body was in (a refusal, a 413): the rest is read and dropped, as
            # closing with it unread could reset the connection before the client reads the
            # answer; but within the head's deadline and `drain_bytes`, and the connection counts
            # as waiting, so it makes room for others.
            self._answered_early = self.cycle
            self._drained = 0
            self._wait_for_head()
            return
        if self.conn.their_state is h11.IDLE:  # ready for the next request: its head has a deadline too
            self._wait_for_head()
        else:
            self._stop_waiting()

    def _wait_for_head(self) -> None:
        self._stop_waiting()
        self._waiting_since = self.loop.time()
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_overdue)

    def _stop_waiting(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None
        self._waiting_since = None

    def _head_overdue(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing() and (self.conn.their_state is h11.IDLE or self._draining()):
            self._waiting_since = None
            self.transport.close()

    def _make_room(self) -> None:
        """Close the connection that has waited longest without sending a request; else refuse this one."""
        waiting = [
            other
            for other in self.connections
            if other is not self
            and isinstance(other, GuardedH11Protocol)
            and other._waiting_since is not None
            and not other.transport.is_closing()
        ]
        if waiting:
            oldest = min(waiting, key=lambda other: other._waiting_since or 0.0)
            oldest._stop_waiting()
            oldest.transport.close()
            return
        logger.warning("refusing a connection: all %d are busy with requests", self.max_connections)
        self._stop_waiting()
        self.transport.write(BUSY_RESPONSE)
        self.transport.close()


def no_delay(transport: asyncio.BaseTransport) -> None:
    """Send each write at once (TCP_NODELAY), whatever socket the connection came from: a
    response's head and body are separate writes, and Nagle's algorithm would hold the body
    until the client acknowledged the head, which a client delays by up to 40 ms."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def protocol_for(settings: HttpSettings) -> type[GuardedH11Protocol]:
    return type(
        "ConfiguredH11Protocol",
        (GuardedH11Protocol,),
        {
            "header_timeout": settings.header_timeout_seconds,
            "max_connections": connection_cap(settings.max_connections),
            "drain_bytes": max(DRAIN_BYTES, 2 * settings.max_body_bytes),
        },
    )


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, taken before anything says where the server listens.

    A port another program holds is an error here, before a banner or a one-time sign-in link
    names an address that would reach that program instead. Port 0 takes a free port; the
    socket says which (`getsockname()`).
    """
    from mcp_tools.core.config import ConfigError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off only on connections whose
    # socket says TCP, and accepted connections inherit this one's. With it on, a response written
    # in two parts (head, then body) waited for the client's delayed ACK: 40 ms on every call.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve(app: Any, host: str, port: int, settings: HttpSettings, sock: socket.socket | None = None) -> None:
    """Run the app until interrupted, with the connection limits of `[http]`, on `sock` when given."""
    import uvicorn

    # log_config=None: uvicorn's lines go through our handler (scrubbed) instead of its own
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=None,
        lifespan="on",
        http=protocol_for(settings),
        timeout_keep_alive=cast(Any, settings.keep_alive_seconds),  # any number of seconds; annotated int
        backlog=accept_burst(),
        # X-Forwarded-For (and -Proto) only from the proxies named: from anyone else they would
        # let a client pick the address its limits are counted for (uvicorn trusts loopback by default)
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies) or None,
    )
    with contextlib.suppress(KeyboardInterrupt), stopping_on_sigterm():
        uvicorn.Server(config).run(sockets=None if sock is None else [sock])


@contextlib.contextmanager
def stopping_on_sigterm() -> Iterator[None]:
    """SIGTERM (`kill`, systemd, Docker) ends the server as Ctrl-C does: exit 0, cleaned up.

    uvicorn shuts down gracefully on SIGTERM, then raises the signal again once its own handler
    is gone; left at the default, that kills the process (exit 143) before anything after the
    server (the address it recorded) is cleaned up. Here it ends as an interrupt."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
