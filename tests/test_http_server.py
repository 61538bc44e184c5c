"""Nobody starves `serve --http` of connections: deadlines for request heads, idle connections
closed, a cap on open connections that fits the descriptor limit, and 503 beyond the request cap.

The server runs in a real subprocess (uvicorn on 127.0.0.1); the attacks are raw sockets.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx2
import pytest

from mcp_tools.core.config import HttpSettings
from mcp_tools.transports.http_server import (
    BURSTS_IN_FLIGHT,
    RESERVED_DESCRIPTORS,
    accept_burst,
    bind,
    connection_cap,
    no_delay,
)
from tests.processes import bearer, demo_config, http_server

TOKEN = "tok-laptop-0123456789"
SLOW_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # and never the blank line that ends it


def serve(tmp_path: Path, http: str = "", open_files: int | None = None):
    config = demo_config(tmp_path, f'[http]\n{http}\n[http.tokens]\nlaptop = "{TOKEN}"\n')
    return http_server(config, log=tmp_path / "server.log", open_files=open_files)


def address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


@contextmanager
def idle_and_slow_connections(base: str, count: int) -> Iterator[list[socket.socket]]:
    """`count` connections from nobody: half send nothing, half a request head that never ends."""
    with ExitStack() as stack:
        sockets = []
        for index in range(count):
            connection = stack.enter_context(socket.create_connection(address(base), timeout=10))
            if index % 2:
                connection.sendall(SLOW_HEAD)
            sockets.append(connection)
        yield sockets


def closed_by_server_within(connection: socket.socket, seconds: float) -> float:
    """Wait (on the socket, not a poll) until the server closes it; how long that took."""
    connection.settimeout(seconds)
    started = time.monotonic()
    while connection.recv(65536):  # a response first, then the end of the stream
        pass
    return time.monotonic() - started


def test_attack_300_idle_and_slow_connections_do_not_stop_healthz(tmp_path: Path) -> None:
    with serve(tmp_path, "header_timeout_seconds = 120", open_files=256) as base, idle_and_slow_connections(base, 300):
        started = time.monotonic()
        response = httpx2.get(base + "/healthz", timeout=5)
        assert response.status_code == 200 and time.monotonic() - started < 5
        call = httpx2.post(
            base + "/text-calls",
            json={"reply": '{"name": "demo.echo", "arguments": {"text": "still here"}}'},
            headers=bearer(TOKEN),
            timeout=5,
        )
        assert call.status_code == 200 and call.json()["results"][0]["content"] == {"echo": "hello: still here"}
    assert "Too many open files" not in (tmp_path / "server.log").read_text()


@pytest.mark.parametrize("sent", [b"", SLOW_HEAD], ids=["nothing", "slow-head"])
def test_attack_a_connection_that_never_completes_its_request_head_is_closed(tmp_path: Path, sent: bytes) -> None:
    with serve(tmp_path, "header_timeout_seconds = 0.5") as base, socket.create_connection(address(base)) as connection:
        connection.sendall(sent)
        assert closed_by_server_within(connection, 10) < 5


def test_a_trickled_next_request_on_a_kept_alive_connection_has_the_same_deadline(tmp_path: Path) -> None:
    settings = "header_timeout_seconds = 0.5\nkeep_alive_seconds = 60"
    with serve(tmp_path, settings) as base, socket.create_connection(address(base)) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200 OK" in connection.recv(65536)
        connection.sendall(SLOW_HEAD)
        assert closed_by_server_within(connection, 10) < 5


def test_an_idle_kept_alive_connection_is_closed(tmp_path: Path) -> None:
    with serve(tmp_path, "keep_alive_seconds = 0.5") as base, socket.create_connection(address(base)) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200 OK" in connection.recv(65536)
        assert closed_by_server_within(connection, 10) < 5


def test_requests_beyond_max_requests_get_503_and_healthz_still_answers(tmp_path: Path) -> None:
    with serve(tmp_path, "max_requests = 2") as base, ExitStack() as stack:
        held = [hold_a_request(stack, base) for _ in range(2)]
        busy = httpx2.post(base + "/text-calls", json={"reply": "hi"}, headers=bearer(TOKEN), timeout=5)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert busy.json()["error"] == "busy" and "2 requests" in busy.json()["message"]
        assert httpx2.get(base + "/healthz", timeout=5).status_code == 200
        finish(held[0])
        held[0].close()
        after = httpx2.post(base + "/text-calls", json={"reply": "hi"}, headers=bearer(TOKEN), timeout=5)
        assert after.status_code == 200 and json.loads(after.text)["markdown"] == "hi"


def hold_a_request(stack: ExitStack, base: str) -> socket.socket:
    """A streamed text-call reply that has not ended: it holds a connection and a request."""
    connection = stack.enter_context(socket.create_connection(address(base), timeout=10))
    connection.sendall(
        b"POST /text-calls?stream=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
        + b"\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n"
    )  # fmt: skip
    assert b"200 OK" in connection.recv(65536)  # the answer streams while the body is still coming
    return connection


def finish(connection: socket.socket) -> None:
    """End the held request's body and read its answer to the end."""
    connection.sendall(b"0\r\n\r\n")
    received = b""
    while not received.endswith(b"\r\n0\r\n\r\n"):  # the last chunk of the streamed answer
        received += connection.recv(65536)


def test_when_every_connection_is_busy_a_newcomer_gets_503_and_an_idle_one_makes_room(tmp_path: Path) -> None:
    with serve(tmp_path, "max_connections = 8") as base, ExitStack() as stack:
        held = [hold_a_request(stack, base) for _ in range(8)]
        with socket.create_connection(address(base), timeout=10) as newcomer:
            answer = newcomer.recv(65536)
        assert answer.startswith(b"HTTP/1.1 503") and b'"error": "busy"' in answer
        finish(held[0])  # its request done, the connection now waits idle for the next one
        assert httpx2.get(base + "/healthz", timeout=5).status_code == 200  # the idle one made room
        assert closed_by_server_within(held[0], 10) < 10


def test_the_connection_cap_fits_the_descriptor_limit() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connection_cap(10**6) == max(8, soft - RESERVED_DESCRIPTORS - BURSTS_IN_FLIGHT * accept_burst())
    assert connection_cap(8) == 8


@pytest.mark.parametrize(("limit", "burst", "cap"), [(256, 32, 96), (1024, 64, 768), (65536, 64, 65280), (100, 16, 8)])
def test_a_low_descriptor_limit_takes_smaller_bursts_and_leaves_room_for_three(
    monkeypatch: pytest.MonkeyPatch, limit: int, burst: int, cap: int
) -> None:
    """Accepted connections hold descriptors for three turns of the loop before an extra one can
    be closed: the open ones and three bursts must fit under the limit, as at macOS's 256."""
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda which: (limit, resource.RLIM_INFINITY))
    assert (accept_burst(), connection_cap(10**6)) == (burst, cap)
    if cap > 8:
        assert cap + BURSTS_IN_FLIGHT * burst + RESERVED_DESCRIPTORS <= limit


def test_limits_are_validated() -> None:
    assert HttpSettings().max_connections == 256 and HttpSettings().max_requests == 100
    for bad in ({"max_requests": 0}, {"header_timeout_seconds": 0}, {"keep_alive_seconds": -1}, {"max_connections": 1}):
        with pytest.raises(ValueError):
            HttpSettings.model_validate(bad)


@pytest.mark.parametrize("command", [["serve", "--http"], ["approvals", "serve"]])
def test_attack_a_port_another_program_holds_gets_no_banner_and_no_sign_in_link(
    tmp_path: Path, command: list[str]
) -> None:
    """Whatever holds the port would receive what a person opens from the banner: a one-time
    sign-in link above all. The server takes its socket first, and says it cannot."""
    from tests.processes import demo_config, run_cli

    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        done = run_cli(demo_config(tmp_path), *command, "--port", str(port))
    assert done.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "serving" not in done.stderr and "approvals page on" not in done.stderr
    assert "/login" not in done.stdout and "token=" not in done.stdout


async def _no_delay_of_an_accepted_connection(listening: socket.socket, set_it: bool) -> int:
    """TCP_NODELAY as the server side of one accepted connection has it (after `no_delay` if set_it)."""
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if set_it:
            no_delay(writer.transport)
        accepted.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(connected, sock=listening)
    async with server:
        _, writer = await asyncio.open_connection(*listening.getsockname()[:2])
        value = await accepted
        writer.close()
    return value


def test_the_servers_socket_sends_each_write_at_once() -> None:
    """A response's head and body are two writes: with Nagle's algorithm on, the body waited for the
    client's delayed ACK, 40 ms on every call. asyncio turns it off only for a socket that says TCP."""
    assert asyncio.run(_no_delay_of_an_accepted_connection(bind("127.0.0.1", 0), set_it=False)) != 0


def test_a_connection_from_a_socket_that_does_not_say_tcp_is_made_to_send_at_once() -> None:
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, as sockets handed over often are
    plain.bind(("127.0.0.1", 0))
    assert asyncio.run(_no_delay_of_an_accepted_connection(plain, set_it=False)) == 0  # what asyncio leaves
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    plain.bind(("127.0.0.1", 0))
    assert asyncio.run(_no_delay_of_an_accepted_connection(plain, set_it=True)) != 0
