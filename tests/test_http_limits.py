"""The internet-facing `serve --http`: what anyone may take of it, and what stays for token holders.

The server runs in a real subprocess (uvicorn on 127.0.0.1, the embedded authorization server
on); the attacks are raw sockets. Linux routes all of 127.0.0.0/8 to loopback, so a socket bound
to 127.0.1.N is a client with an address of its own: many attackers, one machine.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx2
import pytest

from mcp_tools.transports.http_limits import AddressBudgets
from mcp_tools.util.net import address_key
from tests.processes import bearer, demo_config, free_port, http_server, run_cli

pytestmark = pytest.mark.slow
TOKEN = "tok-laptop-0123456789-abcdefghij"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
PUBLIC_POSTS = ["/register", "/token", "/authorize", "/revoke"]


@contextmanager
def exposed(tmp_path: Path, http: str = "") -> Iterator[str]:
    """`serve --http` as on the open internet: the embedded authorization server, a static token."""
    port = free_port()
    config = demo_config(
        tmp_path,
        f'[http]\n{http}\n[http.tokens]\nlaptop = "{TOKEN}"\n'
        f'[http.oauth]\nembedded = true\nresource = "http://127.0.0.1:{port}/mcp"\n',
    )
    with http_server(config, port=port, log=tmp_path / "server.log") as base:
        yield base


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One exposed server with the default limits, a 5-second body deadline and a generous rate
    (the rate has its own test); each test attacks from addresses of its own."""
    limits = "body_timeout_seconds = 5\nheader_timeout_seconds = 2\npublic_requests_per_minute = 10000"
    with exposed(tmp_path_factory.mktemp("exposed"), limits) as base:
        yield base


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def connect(base: str, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port_of(base)), timeout=10, source_address=(source, 0))


def slow_post(connection: socket.socket, path: str, length: int = 1000, sent: bytes = b"{") -> None:
    """A request head that promises `length` bytes of body, and the first of them only."""
    connection.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n".encode()
        + sent
    )


def answer_of(connection: socket.socket, seconds: float = 10) -> bytes:
    """Everything the server sends until it closes the connection."""
    connection.settimeout(seconds)
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def token_call(base: str) -> httpx2.Response:
    return httpx2.post(base + "/mcp", json=INIT, headers={**MCP_HEADERS, **bearer(TOKEN)}, timeout=10)


def test_attack_slow_register_bodies_from_110_addresses_leave_token_holders_their_places(server: str) -> None:
    """Before: ~110 sockets holding a `POST /register` body open took every request place, and
    each token-authenticated `/mcp` call got 503 while `/healthz` said 200."""
    with ExitStack() as stack:
        attackers = []
        for index in range(110):
            connection = stack.enter_context(connect(server, f"127.0.1.{index + 1}"))
            slow_post(connection, "/register")
            attackers.append(connection)
        for _ in range(3):
            call = token_call(server)
            assert call.status_code == 200 and '"serverInfo"' in call.text, call.text
        ready = httpx2.get(server + "/readyz", timeout=10)
        assert ready.status_code == 200 and ready.json() == {"status": "ready"}
        answers = [answer_of(connection, 30) for connection in attackers]
    # the public paths have 20 places of their own: the rest were told so at once; those that
    # got one held it until the body deadline
    assert sum(answer.startswith(b"HTTP/1.1 503") and b'"busy"' in answer for answer in answers) >= 90
    assert all(answer.startswith((b"HTTP/1.1 503", b"HTTP/1.1 408")) for answer in answers)


def wait_for_answer(connection: socket.socket, seconds: float) -> bool:
    connection.settimeout(seconds)
    try:
        return bool(connection.recv(1, socket.MSG_PEEK))
    except TimeoutError:
        return False


def test_attack_many_slow_bodies_from_one_address_get_429_beyond_four(server: str) -> None:
    with ExitStack() as stack:
        attackers = [stack.enter_context(connect(server, "127.0.2.1")) for _ in range(30)]
        for connection in attackers:
            slow_post(connection, "/register")
        refused = [answer_of(connection) for connection in attackers[4:]]
        assert all(answer.startswith(b"HTTP/1.1 429") for answer in refused)
        assert b"at most 4 requests at once from one address" in refused[0]
        # another address is served meanwhile, and so is every token holder
        with connect(server, "127.0.2.2") as other:
            other.sendall(b"GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert other.recv(65536).startswith(b"HTTP/1.1 200")
        assert token_call(server).status_code == 200
        assert all(answer_of(connection).startswith(b"HTTP/1.1 408") for connection in attackers[:4])


def test_attack_bodies_that_trickle_past_their_deadline_get_408_and_the_connection_ends(server: str) -> None:
    """The deadline is for the whole body, not per byte: a byte every 0.3 s keeps nothing open,
    on any path, with a token or without."""
    paths = [*PUBLIC_POSTS, "/approvals/consent/x", "/mcp", "/text-calls"]
    with ExitStack() as stack:
        trickling = {}
        for index, path in enumerate(paths):
            connection = stack.enter_context(connect(server, f"127.0.6.{index + 1}"))
            connection.sendall(
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
                "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode()
            )
            connection.settimeout(0.01)
            trickling[path] = connection
        started = time.monotonic()
        answers = dict.fromkeys(paths, b"")
        while time.monotonic() - started < 30 and not all(answers.values()):
            time.sleep(0.3)
            for path, connection in trickling.items():
                if answers[path]:
                    continue
                try:
                    answers[path] = connection.recv(65536)
                except TimeoutError:
                    connection.sendall(b" ")
        for path, connection in trickling.items():
            answer = answers[path] + answer_of(connection)  # then the server closes it
            assert answer.startswith(b"HTTP/1.1 408"), (path, answer)
            assert b"body_timeout_seconds" in answer


@pytest.mark.parametrize("path", [*PUBLIC_POSTS, "/approvals/login", "/.well-known/oauth-authorization-server"])
def test_attack_oversized_bodies_on_public_paths_get_413_unread(server: str, path: str) -> None:
    with connect(server, "127.0.8.1") as connection:  # declared: refused before a byte of it is read
        slow_post(connection, path, length=10**12)
        answer = answer_of(connection)  # then closed within the head deadline, the rest unread
        assert answer.startswith(b"HTTP/1.1 413") and b"public_max_body_bytes" in answer
    with connect(server, "127.0.8.1") as connection:  # streamed: refused once past the limit
        connection.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"x" * 16384
        for _ in range(5):  # 80 KiB, past the 64 KiB limit, and the body not ended
            connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = answer_of(connection)  # then closed within the head deadline
        assert answer.startswith(b"HTTP/1.1 413"), answer
    assert httpx2.get(server + "/healthz", timeout=5).status_code == 200


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/mcp", "/.well-known/oauth-protected-resource/mcp"])
def test_attack_a_body_no_one_reads_does_not_keep_the_connection(server: str, path: str) -> None:
    """Before: answered at once (405, 401) but the connection stayed, reading a trickled body
    forever, holding one of the open connections with no deadline at all."""
    with connect(server, "127.0.7.1") as connection:
        slow_post(connection, path, length=10**9)
        answer = answer_of(connection, 4)  # answered, then closed at the head deadline (2 s), not the body's
        assert answer.startswith(b"HTTP/1.1 4")


def test_attack_a_flood_from_one_address_is_rate_limited_and_forwarded_for_is_believed_from_proxies_only(
    tmp_path: Path,
) -> None:
    metadata = "/.well-known/oauth-authorization-server"
    with exposed(tmp_path, 'public_requests_per_minute = 5\ntrusted_proxies = ["127.0.4.1"]') as base:

        def status(source: str, forwarded: str | None = None, path: str = metadata) -> int:
            with connect(base, source) as connection:
                header = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
                connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}\r\n".encode())
                return int(connection.recv(65536).split(b" ", 2)[1])

        with httpx2.Client(timeout=10) as client:
            assert [client.get(base + metadata).status_code for _ in range(5)] == [200] * 5
            refused = client.get(base + metadata, headers={"X-Forwarded-For": "203.0.113.9"})
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
            assert refused.json()["error"] == "rate_limited"
            assert client.get(base + "/authorize").status_code == 429  # every public path shares it
        assert status("127.0.3.1") == 200  # another address has its own budget
        assert token_call(base).status_code == 200  # token holders are not counted
        assert httpx2.get(base + "/healthz", timeout=5).status_code == 200
        # anyone but the proxy: what it forwards is ignored
        assert [status("127.0.4.2", f"198.51.100.{n}") for n in range(10, 16)] == [200] * 5 + [429]
        # through the proxy: each forwarded client its own budget (the proxy appends the real one)
        assert [status("127.0.4.1", "198.51.100.1") for _ in range(6)] == [200] * 5 + [429]
        assert status("127.0.4.1", "203.0.113.7, 198.51.100.2") == 200


def test_readyz_says_when_token_holders_find_no_place(tmp_path: Path) -> None:
    with exposed(tmp_path, "max_requests = 2\npublic_max_requests = 1") as base, ExitStack() as stack:
        held = [hold_a_request(stack, base) for _ in range(2)]
        ready = httpx2.get(base + "/readyz", timeout=10)
        assert ready.status_code == 503 and "saturated" in ready.json()["reason"]
        assert httpx2.get(base + "/healthz", timeout=5).status_code == 200
        finish(held[0])
        assert httpx2.get(base + "/readyz", timeout=10).status_code == 200
        # the public places filling up does not take the server out of rotation
        stalled = stack.enter_context(connect(base, "127.0.5.1"))
        slow_post(stalled, "/register")
        assert not wait_for_answer(stalled, 0.2)
        assert httpx2.get(base + "/readyz", timeout=10).status_code == 200
        with connect(base, "127.0.5.2") as other:
            slow_post(other, "/register")
            assert other.recv(65536).startswith(b"HTTP/1.1 503")


def hold_a_request(stack: ExitStack, base: str) -> socket.socket:
    """A streamed text-call reply that has not ended: it holds a token holder's place."""
    connection = stack.enter_context(connect(base))
    connection.sendall(
        b"POST /text-calls?stream=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
        + b"\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n"
    )  # fmt: skip
    assert b"200 OK" in connection.recv(65536)
    return connection


def finish(connection: socket.socket) -> None:
    connection.sendall(b"0\r\n\r\n")
    received = b""
    while not received.endswith(b"\r\n0\r\n\r\n"):
        received += connection.recv(65536)


def test_the_sign_in_flow_still_works_within_the_limits(server: str) -> None:
    registered = httpx2.post(
        server + "/register",
        json={
            "redirect_uris": ["http://127.0.0.1:1/callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "client_name": "limits",
        },
        timeout=10,
    )
    assert registered.status_code == 201, registered.text
    refused = httpx2.post(server + "/token", data={"grant_type": "authorization_code", "code": "x"}, timeout=10)
    assert refused.status_code in (400, 401) and "error" in refused.json()


def test_address_budgets_stay_bounded_and_refill() -> None:
    now = [0.0]
    budgets = AddressBudgets(per_minute=2, at_once=1, entries=100, clock=lambda: now[0])
    for index in range(10_000):  # an attacker with many addresses
        key = f"10.{index // 65536}.{index // 256 % 256}.{index % 256}"
        assert budgets.take(key) is None
        budgets.release(key)
    assert len(budgets.buckets) == 100 and not budgets.running
    assert budgets.take("192.0.2.1") is None
    assert budgets.take("192.0.2.1") == ("at most 1 requests at once from one address", 1)
    budgets.release("192.0.2.1")
    assert budgets.take("192.0.2.1") is None
    budgets.release("192.0.2.1")
    refused = budgets.take("192.0.2.1")
    assert refused is not None and refused[1] == 30
    now[0] = 30.0
    assert budgets.take("192.0.2.1") is None


@pytest.mark.parametrize(
    ("client", "key"),
    [
        ("203.0.113.5", "203.0.113.5"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),  # one subscriber's /64 is one client
        ("::ffff:198.51.100.4", "198.51.100.4"),
    ],
)
def test_a_client_is_counted_by_its_address_and_ipv6_by_its_64(client: str, key: str) -> None:
    assert address_key({"client": (client, 1234)}) == key


def test_doctor_warns_when_exposed_without_the_limits_that_matter(tmp_path: Path) -> None:
    config = demo_config(
        tmp_path,
        '[http]\nhost = "0.0.0.0"\nallowed_hosts = ["mcp.example.org"]\nheader_timeout_seconds = 120\n'
        'body_timeout_seconds = 600\ntrusted_proxies = ["0.0.0.0/0"]\n'
        '[http.oauth]\nembedded = true\nresource = "https://mcp.example.org/mcp"\n',
    )
    out = run_cli(config, "doctor").stdout
    assert "header_timeout_seconds = 120 while listening on 0.0.0.0" in out
    assert "body_timeout_seconds = 600" in out
    assert "calls_per_minute is unset" in out
    assert "trusted_proxies holds 0.0.0.0/0" in out
    (tmp_path / "quiet").mkdir()
    quiet = demo_config(tmp_path / "quiet", "[http]\nheader_timeout_seconds = 120\n")
    assert "warning: [http]" not in run_cli(quiet, "doctor").stdout  # on loopback alone: nobody else reaches it


def test_the_standalone_approvals_page_takes_the_limits_of_public_paths(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from mcp_tools.approvals.page import ApprovalsPage
    from mcp_tools.cli.approvals import page_server
    from mcp_tools.core.config import ApprovalPageSettings, HttpSettings
    from mcp_tools.policy.decisions import Decisions
    from mcp_tools.state.sqlite import PolicyStore
    from mcp_tools.transports.http import page_security

    store = PolicyStore(tmp_path / "policy.sqlite3")
    try:
        page = ApprovalsPage(store, Decisions(store, 600), ApprovalPageSettings(), page_security("127.0.0.1", []))
        limits = HttpSettings(public_requests_per_minute=3)
        with TestClient(page_server(page, limits), base_url="http://127.0.0.1:8766") as client:
            large = client.post("/approvals/login", content=b"x" * 70_000)
            assert large.status_code == 413 and large.json()["error"] == "too_large"
            assert [client.get("/approvals/").status_code for _ in range(3)][-1] == 429
    finally:
        store.close()


def test_the_approvals_pages_long_polls_hold_no_place_of_their_tabs_address(tmp_path: Path) -> None:
    """A person with several tabs open keeps one long poll in each; approving must still work."""
    from starlette.testclient import TestClient

    from mcp_tools.approvals.page import ApprovalsPage, new_login_link
    from mcp_tools.cli.approvals import page_server
    from mcp_tools.core.config import ApprovalPageSettings, HttpSettings
    from mcp_tools.policy.decisions import Decisions
    from mcp_tools.state.sqlite import PolicyStore
    from mcp_tools.transports.http import page_security

    store = PolicyStore(tmp_path / "policy.sqlite3")
    try:
        page = ApprovalsPage(store, Decisions(store, 600), ApprovalPageSettings(), page_security("127.0.0.1", []))
        limits = HttpSettings(public_requests_per_address=1)
        base = "http://127.0.0.1:8766"
        with TestClient(page_server(page, limits), base_url=base) as client:
            link = new_login_link(store, f"{base}/approvals", 600)
            assert client.get(link.removeprefix(base)).status_code == 200
            version = client.get("/approvals/fragment").headers["x-version"]
            with ExitStack() as stack:
                from concurrent.futures import ThreadPoolExecutor

                pool = stack.enter_context(ThreadPoolExecutor(2))
                polls = [pool.submit(client.get, f"/approvals/fragment?since={version}") for _ in range(2)]
                assert client.get("/approvals/").status_code == 200  # while the tabs wait, or about to
                assert all(poll.result().status_code == 200 for poll in polls)
    finally:
        store.close()
