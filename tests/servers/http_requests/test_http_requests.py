"""http_request over the real MCP client against local HTTP servers: allowlist, SSRF, credentials."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.composition.app import App, build_app
from mcp_tools.util.outbound import system_resolver
from tests.budgets import assert_fits
from tests.harness import connect, failure, make_config, ok, text_of
from tests.servers.http_requests.fixtures import Recorder, fixed_resolver, local_server, self_signed

SECRET = "s3cr3t-token-value-1234567890"
PUBLIC_SIDE = "127.0.0.2"  # stands in for a public address: the only network the tests allow


def settings(**outbound: Any) -> dict[str, Any]:
    values = {
        "enabled": True,
        "allow_hosts": ["api.test", "other.test", "loop.test", "rebind.test"],
        "allow_networks": [f"{PUBLIC_SIDE}/32"],
        "allow_plain_http": True,
        **outbound,
    }
    return {"server": {"servers": ["http"]}, "http": {"outbound": values}}


def make_app(tmp_path: Path, resolver_table: dict[str, list[Any]], calls: list[str] | None = None, **outbound: Any):
    config = make_config(tmp_path, settings(**outbound), environ={"API_TEST_TOKEN": SECRET})
    app = build_app(config)
    app.services["http"].resolver = fixed_resolver(resolver_table, calls)
    return app


@pytest.fixture
def server() -> Iterator[tuple[int, Recorder]]:
    with local_server(PUBLIC_SIDE) as (httpd, recorder):
        yield httpd.server_address[1], recorder


def everything_returned(result: Any, app: App) -> str:
    rows = [row.__dict__ for row in app.store.tail(50)]
    return json.dumps([result.model_dump(mode="json")], default=str) + json.dumps(rows, default=str)


@pytest.mark.anyio
async def test_off_by_default(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {}))
    (status,) = [s for s in app.statuses if s.name == "http"]
    assert not status.enabled and "off by default" in (status.reason or "")
    async with connect(tmp_path, app=app) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "http_request" not in names


@pytest.mark.anyio
async def test_get_to_an_allowed_host_runs_and_is_reported(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]})
    seen: list[Any] = []
    async with connect(tmp_path, app=app, seen=seen) as client:
        result = await client.call_tool(
            "http_request", {"url": f"http://api.test:{port}/hello?x=1", "headers": {"Accept": "application/json"}}
        )
    data = ok(result)
    assert data["status"] == 200 and data["encoding"] == "text"
    assert json.loads(data["body"])["method"] == "GET"
    assert recorder.requests[0]["headers"]["host"] == f"api.test:{port}"  # pinned to the IP, Host kept
    assert recorder.requests[0]["path"] == "/hello?x=1"
    assert seen == [] and text_of(result).startswith("Action performed: GET http://api.test")
    assert "<<<response " in text_of(result)


@pytest.mark.anyio
async def test_a_host_outside_the_allowlist_is_refused_before_anyone_is_asked(
    tmp_path: Path, server: tuple[int, Recorder]
) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"evil.test": [PUBLIC_SIDE]})
    seen: list[Any] = []
    async with connect(tmp_path, app=app, seen=seen) as client:
        for method in ("GET", "POST"):
            error = failure(
                await client.call_tool("http_request", {"method": method, "url": f"http://evil.test:{port}/"})
            )
            assert error["kind"] == "denied_by_policy" and "evil.test" in error["message"]
        lookalike = failure(await client.call_tool("http_request", {"url": f"http://api.test.evil.test:{port}/"}))
    assert lookalike["kind"] == "denied_by_policy"
    assert seen == [] and recorder.requests == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://[::1]:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://[::127.0.0.1]:{port}/",
        "http://[64:ff9b::7f00:1]:{port}/",
        "http://[2002:a00:1::1]/",
        "http://100.64.0.1/",
        "http://0.0.0.0:{port}/",
    ],
)
async def test_non_public_addresses_are_refused_even_when_every_host_is_allowed(tmp_path: Path, url: str) -> None:
    with local_server("127.0.0.1") as (httpd, recorder):
        app = make_app(tmp_path, {}, allow_hosts=["*"], allow_networks=[])
        async with connect(tmp_path, app=app) as client:
            error = failure(await client.call_tool("http_request", {"url": url.format(port=httpd.server_address[1])}))
    assert error["kind"] == "denied_by_policy"
    assert "refused" in error["message"]
    assert recorder.requests == []


@pytest.mark.anyio
async def test_a_name_resolving_to_loopback_is_refused(tmp_path: Path) -> None:
    with local_server("127.0.0.1") as (httpd, recorder):
        app = make_app(tmp_path, {"loop.test": ["127.0.0.1"]})
        async with connect(tmp_path, app=app) as client:
            error = failure(
                await client.call_tool("http_request", {"url": f"http://loop.test:{httpd.server_address[1]}/"})
            )
    assert error["kind"] == "denied_by_policy"
    assert "loop.test resolves to 127.0.0.1, a loopback address" in error["message"]
    assert recorder.requests == []


@pytest.mark.anyio
async def test_a_mixed_answer_with_one_private_address_is_refused(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"api.test": [[PUBLIC_SIDE, "10.0.0.7"]]})
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("http_request", {"url": f"http://api.test:{port}/"}))
    assert error["kind"] == "denied_by_policy" and "10.0.0.7" in error["message"]
    assert recorder.requests == []


@pytest.mark.anyio
async def test_redirects_are_not_followed_by_default(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]})
    async with connect(tmp_path, app=app) as client:
        data = ok(await client.call_tool("http_request", {"url": f"http://api.test:{port}/redirect?to=/elsewhere"}))
    assert data["status"] == 302 and data["headers"]["location"] == "/elsewhere"
    assert len(recorder.requests) == 1


@pytest.mark.anyio
async def test_a_redirect_to_a_private_address_is_refused(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    with local_server("127.0.0.1") as (inner, inner_recorder):
        target = f"http://127.0.0.1:{inner.server_address[1]}/admin"
        app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]}, allow_hosts=["*"], max_redirects=3)
        async with connect(tmp_path, app=app) as client:
            error = failure(
                await client.call_tool("http_request", {"url": f"http://api.test:{port}/redirect?to={target}"})
            )
    assert error["kind"] == "denied_by_policy" and "127.0.0.1" in error["message"]
    assert len(recorder.requests) == 1 and inner_recorder.requests == []


@pytest.mark.anyio
async def test_an_allowed_redirect_is_followed_and_checked_again(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE], "other.test": [PUBLIC_SIDE]}, max_redirects=2)
    async with connect(tmp_path, app=app) as client:
        data = ok(
            await client.call_tool(
                "http_request", {"url": f"http://api.test:{port}/redirect?to=http://other.test:{port}/x"}
            )
        )
    assert data["status"] == 200 and data["redirects"] == [f"http://other.test:{port}/x"]
    assert [r["headers"]["host"] for r in recorder.requests] == [f"api.test:{port}", f"other.test:{port}"]


def _same_port_servers() -> tuple[ExitStack, int, Recorder, Recorder]:
    """One server on the allowed address and one on loopback, on the same port number."""
    for _ in range(20):
        stack = ExitStack()
        httpd, good = stack.enter_context(local_server(PUBLIC_SIDE))
        port = httpd.server_address[1]
        try:
            _, bad = stack.enter_context(local_server("127.0.0.1", port))
        except OSError:
            stack.close()
            continue
        return stack, port, good, bad
    pytest.skip("could not find one free port on both loopback addresses")


@pytest.mark.anyio
async def test_dns_answers_changing_between_check_and_connect_change_nothing(tmp_path: Path) -> None:
    stack, port, good, bad = _same_port_servers()
    calls: list[str] = []
    with stack:
        # First answer public (passes the check), every later answer loopback (a rebinding attack).
        app = make_app(tmp_path, {"rebind.test": [PUBLIC_SIDE, "127.0.0.1"]}, calls)
        async with connect(tmp_path, app=app) as client:
            ok(await client.call_tool("http_request", {"url": f"http://rebind.test:{port}/"}))
            assert calls == ["rebind.test"]  # resolved once; the connection used that checked answer
            assert len(good.requests) == 1 and bad.requests == []
            again = failure(await client.call_tool("http_request", {"url": f"http://rebind.test:{port}/"}))
    assert again["kind"] == "denied_by_policy"
    assert bad.requests == []


@pytest.mark.anyio
async def test_credentials_are_added_by_the_server_and_redacted_from_everything(
    tmp_path: Path, server: tuple[int, Recorder]
) -> None:
    port, recorder = server
    hosts = {"api.test": {"headers": {"Authorization": "Bearer ${API_TEST_TOKEN}"}}}
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE], "other.test": [PUBLIC_SIDE]}, hosts=hosts, max_redirects=1)
    seen: list[Any] = []
    async with connect(tmp_path, app=app, seen=seen) as client:
        echoed = await client.call_tool(
            "http_request",
            {
                "method": "POST",
                "url": f"http://api.test:{port}/echo",
                "body": "hello",
                "headers": {"authorization": "Bearer guessed-by-the-model"},
            },
        )
        redirected = await client.call_tool(
            "http_request", {"url": f"http://api.test:{port}/redirect?to=http://other.test:{port}/"}
        )
    data = ok(echoed)
    assert recorder.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"  # ours replaced the model's
    assert "guessed-by-the-model" not in json.dumps(recorder.requests[0]["headers"])
    assert "authorization" not in recorder.requests[2]["headers"]  # not carried to another host
    assert "[redacted]" in data["body"] and data["headers"]["x-echo-authorization"] == "[redacted]"
    assert "set-cookie" not in data["headers"]
    assert "credentials configured for this host" in seen[0].message
    for result in (echoed, redirected):
        assert SECRET not in everything_returned(result, app)
    assert SECRET not in json.dumps([p.model_dump(mode="json") for p in seen])


@pytest.mark.anyio
async def test_a_missing_credential_variable_keeps_the_namespace_off(tmp_path: Path) -> None:
    hosts = {"api.test": {"headers": {"X-Key": "${NOT_SET_ANYWHERE}"}}}
    app = build_app(make_config(tmp_path, {"http": {"outbound": {**settings()["http"]["outbound"], "hosts": hosts}}}))
    (status,) = [s for s in app.statuses if s.name == "http"]
    assert not status.enabled and "NOT_SET_ANYWHERE" in (status.reason or "")


@pytest.mark.anyio
async def test_methods_that_change_things_ask_first(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]})
    async with connect(tmp_path, app=app, elicit="decline") as client:
        declined = failure(
            await client.call_tool("http_request", {"method": "DELETE", "url": f"http://api.test:{port}/x"})
        )
    async with connect(tmp_path, app=app, elicit=None) as client:
        pending = failure(await client.call_tool("http_request", {"method": "PUT", "url": f"http://api.test:{port}/x"}))
    assert declined["kind"] == "declined_by_user" and pending["kind"] == "approval_required"
    assert recorder.requests == []


@pytest.mark.anyio
async def test_long_text_is_paged_from_the_stored_response(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]}, page_chars=1000)
    async with connect(tmp_path, app=app) as client:
        first = ok(await client.call_tool("http_request", {"url": f"http://api.test:{port}/big"}))
        page = {"response_id": first["response_id"], "offset": first["next_offset"]}
        second = ok(await client.call_tool("http_request", page))
        unknown = failure(await client.call_tool("http_request", {"response_id": "rsp-nope"}))
        both = failure(await client.call_tool("http_request", {"url": "http://api.test/", "response_id": "x"}))
    assert first["total"] == 100_000 and len(first["body"]) == 1000 and first["next_offset"] == 1000
    assert second["offset"] == 1000 and second["next_offset"] == 2000
    assert len(recorder.requests) == 1
    assert unknown["kind"] == "not_found" and both["kind"] == "invalid_arguments"


@pytest.mark.anyio
async def test_charset_labels_are_read_as_browsers_read_them(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, _ = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]})
    async with connect(tmp_path, app=app) as client:
        latin1 = ok(await client.call_tool("http_request", {"url": f"http://api.test:{port}/labelled"}))
        python_only = ok(
            await client.call_tool("http_request", {"url": f"http://api.test:{port}/labelled?charset=rot13"})
        )
    assert latin1["encoding"] == "text" and latin1["body"] == "\u201cquoted\u201d \u2013 \u20ac5"
    assert python_only["encoding"] == "base64"  # not a charset to a browser: the bytes, untouched


@pytest.mark.anyio
async def test_binary_bodies_come_as_an_image_or_base64_under_the_limit(
    tmp_path: Path, server: tuple[int, Recorder]
) -> None:
    port, _ = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]}, max_base64_bytes=1024)
    async with connect(tmp_path, app=app) as client:
        shown = await client.call_tool("http_request", {"url": f"http://api.test:{port}/binary"})
        small = ok(await client.call_tool("http_request", {"url": f"http://api.test:{port}/binary?type=font/woff"}))
        large = ok(await client.call_tool("http_request", {"url": f"http://api.test:{port}/binary?times=10"}))
    images = [block for block in shown.content if isinstance(block, types.ImageContent)]
    assert ok(shown)["encoding"] == "image" and ok(shown)["body"] == "" and ok(shown)["total"] == 256
    assert [(base64.b64decode(image.data), image.mime_type) for image in images] == [(bytes(range(256)), "image/png")]
    assert small["encoding"] == "base64" and base64.b64decode(small["body"]) == bytes(range(256))
    assert large["encoding"] == "omitted" and large["body"] == "" and large["total"] == 2560


@pytest.mark.anyio
async def test_a_256_kib_binary_body_comes_in_base64_pages_inside_the_budget(
    tmp_path: Path, server: tuple[int, Recorder]
) -> None:
    port, _ = server
    app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]})
    pieces: list[str] = []
    async with connect(tmp_path, app=app) as client:
        first = await client.call_tool("http_request", {"url": f"http://api.test:{port}/binary?times=1024&type=x/y"})
        assert_fits(first)
        said = text_of(first)
        assert "262,144 bytes" in said and "more, call again with response_id and offset=20000" in said
        page = ok(first)
        while True:
            pieces.append(page["body"])
            if page["next_offset"] is None:
                break
            arguments = {"response_id": page["response_id"], "offset": page["next_offset"]}
            result = await client.call_tool("http_request", arguments)
            assert_fits(result)
            page = ok(result)
    assert base64.b64decode("".join(pieces)) == bytes(range(256)) * 1024


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"url": "ftp://api.test/x"}, "http(s) URL"),
        ({"url": "http://user:pw@api.test/"}, "user name or password"),
        ({"url": "http://api.test/", "headers": {"Host": "x"}}, "'Host' cannot be set"),
        ({"url": "http://api.test/", "headers": {"X-A": "a\r\nX-B: b"}}, "not valid"),
        ({}, "give url"),
    ],
)
async def test_bad_requests_say_what_to_fix(tmp_path: Path, arguments: dict[str, Any], needle: str) -> None:
    app = make_app(tmp_path, {})
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("http_request", arguments))
    assert error["kind"] == "invalid_arguments" and needle in error["message"]


def test_the_system_resolver_answers_for_localhost() -> None:
    import anyio

    from mcp_tools.util.outbound import system_resolver

    answers = anyio.run(system_resolver, "localhost", 80)
    assert answers and all(socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a) for a in answers)


@pytest.mark.anyio
async def test_https_goes_to_the_checked_address_with_the_name_in_sni_and_the_certificate(tmp_path: Path) -> None:
    certificate = self_signed(tmp_path, ["secure.test"])
    with local_server(PUBLIC_SIDE, tls=certificate.server_context()) as (httpd, recorder):
        port = httpd.server_address[1]
        app = make_app(tmp_path, {"secure.test": [PUBLIC_SIDE]}, allow_hosts=["secure.test"], allow_plain_http=False)
        app.services["http"].tls_verify = certificate.client_context()
        async with connect(tmp_path, app=app) as client:
            data = ok(await client.call_tool("http_request", {"url": f"https://secure.test:{port}/"}))
            plain = failure(await client.call_tool("http_request", {"url": f"http://secure.test:{port}/"}))
    assert data["status"] == 200
    assert certificate.requested_names == ["secure.test"]  # SNI carries the name, not the pinned IP
    assert recorder.requests[0]["headers"]["host"] == f"secure.test:{port}"
    assert plain["kind"] == "denied_by_policy" and "plain http" in plain["message"]


@pytest.mark.anyio
async def test_a_certificate_for_another_name_is_refused(tmp_path: Path) -> None:
    certificate = self_signed(tmp_path, ["other.test"])
    with local_server(PUBLIC_SIDE, tls=certificate.server_context()) as (httpd, recorder):
        app = make_app(tmp_path, {"api.test": [PUBLIC_SIDE]})
        app.services["http"].tls_verify = certificate.client_context()
        async with connect(tmp_path, app=app) as client:
            error = failure(
                await client.call_tool("http_request", {"url": f"https://api.test:{httpd.server_address[1]}/"})
            )
    assert error["kind"] == "upstream_error" and "ConnectError" in error["message"]
    assert recorder.requests == []


def test_config_errors_name_the_outbound_table(tmp_path: Path) -> None:
    from mcp_tools.core.config import ConfigError

    with pytest.raises(ConfigError, match=r"http\.outbound\.allow_networks.*not an IP network"):
        build_app(make_config(tmp_path, settings(allow_networks=["not-a-network"])))
    with pytest.raises(ConfigError, match=r"http\.outbound\.allow_host: unknown setting"):
        build_app(make_config(tmp_path, {"http": {"outbound": {"enabled": True, "allow_host": ["x"]}}}))


@pytest.mark.anyio
@pytest.mark.parametrize("host", ["localhost", "2130706433", "0x7f.0.0.1", "127.1"])
async def test_loopback_in_disguise_is_refused_by_the_real_resolver(tmp_path: Path, host: str) -> None:
    with local_server("127.0.0.1") as (httpd, recorder):
        app = make_app(tmp_path, {}, allow_hosts=["*"], allow_networks=[])
        app.services["http"].resolver = system_resolver  # the system's own parsing of odd numeric forms
        async with connect(tmp_path, app=app) as client:
            error = failure(
                await client.call_tool("http_request", {"url": f"http://{host}:{httpd.server_address[1]}/"})
            )
    assert error["kind"] == "denied_by_policy" and "a loopback address" in error["message"]
    assert recorder.requests == []
