"""`POST /text-calls` under hostile bodies: every answer is a result or a 4xx that names the problem, never a 5xx.

The app runs in-process behind Starlette's test client with the real middleware, token and
namespaces; a request the server could not handle comes back as a 500 instead of an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from mcp_tools.composition.app import build_app
from mcp_tools.transports.http import build_http_app
from tests.harness import make_config

TOKEN = "tok-fuzz-0123456789abcdef"
BASE = "http://127.0.0.1:8765"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
DEEP = 100_000
FRAGMENTS = [
    '{"name": "demo.echo", "arguments": {"text": "',
    '{"tool": "demo_echo", "arguments": ',
    '"}}',
    "}",
    "{",
    "[",
    "]",
    '"',
    "\\",
    "\\ud800",
    "\\udfff",
    "\\u0000",
    "\ud800",
    "\udc80",
    "\x00",
    "```json\n",
    "```\n",
    "\u2702\ufe0f\U0001f431",
    "<tool_call>",
    "</tool_call>",
    "> ",
    "<!--",
    "\n",
    '[{"id": "a", "type": "demo.echo", "operation": "echo", "parameters": {"text": "x"}}]',
]


@pytest.fixture
def client(tmp_path: Path, demo_namespace: str) -> Iterator[TestClient]:
    config = make_config(tmp_path, {"server": {"servers": ["demo"]}, "http": {"tokens": {"fuzz": TOKEN}}})
    app = build_http_app(build_app(config), "127.0.0.1", 8765)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as test_client:
        yield test_client


nesting = st.builds(
    lambda depth, opening, value: opening * depth + value + {"[": "]", "{": "}"}.get(opening[-1], "") * depth,
    st.sampled_from([1, 50, 1_000, DEEP]),
    st.sampled_from(["[", '{"a":', '{"name": "demo.echo", "arguments": {"text": [', "[[{"]),
    st.sampled_from(["", "1", '"x"', "\\ud800"]),
)
OPTION_VALUES = st.sampled_from(["auto", "prose", "scissors", "report", "markdown", "results", "xml"])
replies = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(FRAGMENTS), nesting), max_size=8).map("".join)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str | None]:
    reply = draw(replies)
    kind = draw(st.sampled_from(["plain", "json", "json-raw", "bytes", "json-deep", "json-shape"]))
    if kind == "plain":
        return reply.encode("utf-8", "surrogatepass"), draw(st.sampled_from(["text/plain", None]))
    if kind == "json":
        payload = {"reply": reply}
        for key in ("format", "output"):
            if draw(st.booleans()):
                payload[key] = draw(st.one_of(OPTION_VALUES, st.integers(), st.lists(st.text(max_size=3))))
        return json.dumps(payload).encode(), draw(
            st.sampled_from(["application/json", "Application/JSON; charset=utf-8"])
        )
    if kind == "json-raw":  # surrogates as raw UTF-8-like bytes inside the JSON string
        return b'{"reply": "' + reply.encode("utf-8", "surrogatepass") + b'"}', "application/json"
    if kind == "json-deep":
        return b'{"reply": ' + b"[" * DEEP + b"]" * DEEP + b"}", "application/json"
    if kind == "json-shape":
        shape = draw(st.sampled_from(['"just a string"', "[]", "null", '{"reply": 5}', '{"reply": null}', "{}"]))
        return shape.encode(), "application/json"
    return draw(st.binary(max_size=200)), draw(st.sampled_from(["text/plain", "application/json", None]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies(), stream=st.booleans(), format_=st.sampled_from([None, "auto", "prose", "scissors", "xml"]))
def test_fuzz_no_body_gets_a_server_error(
    client: TestClient, body: tuple[bytes, str | None], stream: bool, format_: str | None
) -> None:
    content, content_type = body
    headers = dict(HEADERS)
    if content_type is not None:
        headers["Content-Type"] = content_type
    params = {key: value for key, value in (("stream", "1" if stream else None), ("format", format_)) if value}
    response = client.post("/text-calls", content=content, headers=headers, params=params)
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        error = response.json()
        assert error["error"] == "bad_request" and error["message"]
    elif stream:
        # one event a line, split on "\n" only: str.splitlines would also cut at a U+0085 inside a string
        events = [json.loads(line) for line in response.content.decode("utf-8").split("\n") if line]
        assert events and events[-1]["event"] in ("done", "error")
    elif response.headers["content-type"].startswith("text/markdown"):  # `"output": "markdown"` in the body
        response.content.decode("utf-8")  # raises unless the answer is valid UTF-8, as every answer must be
    else:  # the report, or with `"output": "results"` in the body the list of results
        assert isinstance(response.json(), dict | list)
