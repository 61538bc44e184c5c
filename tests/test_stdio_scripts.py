"""`mcp-tools serve` over stdio as scripts use it: everything written at once, then end of input.

`printf '<initialize>\\n<initialized>\\n<tools/list>\\n' | mcp-tools serve` must answer every
request it read before the end, then exit 0; and a request whose JSON escapes a lone surrogate
(`"doc\\udfffs"`, which models send) gets its answer like any other, over stdio and over HTTP.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest

from tests.processes import DEMO_ENTRY, ROOT, bearer, child_env, demo_config, http_server, write_config
from tests.results import check_call_result, error_payload

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "sh", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LONE = "doc\udfffs"  # json.dumps writes it as the escape "doc\udfffs", as clients do


def piped(config: Path, messages: list[dict[str, Any]]) -> tuple[int, dict[Any, dict[str, Any]], str]:
    """The messages written to `serve` at once and stdin closed; (exit code, answers by id, stderr)."""
    wire = b"".join((json.dumps(message) + "\n").encode() for message in messages)
    done = subprocess.run(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "serve"],
        input=wire,
        capture_output=True,
        env=child_env(),
        cwd=str(ROOT),
        timeout=120,
    )
    answers = {}
    for line in done.stdout.decode("utf-8").splitlines():  # strict: every answer is UTF-8
        answer = json.loads(line)
        if "id" in answer and "method" not in answer:
            answers[answer["id"]] = answer
    return done.returncode, answers, done.stderr.decode(errors="replace")


def call(request_id: int, name: str, arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_every_request_read_before_end_of_input_is_answered_then_exit_0(tmp_path: Path) -> None:
    messages = [
        INITIALIZE,
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        call(3, "demo_echo", {"text": "one"}),
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
        call(5, "demo_echo", {"text": "two"}),
    ]
    code, answers, stderr = piped(demo_config(tmp_path), messages)
    assert code == 0, stderr
    assert sorted(answers) == [1, 2, 3, 4, 5]
    assert {tool["name"] for tool in answers[2]["result"]["tools"]} >= {"demo_echo", "demo_erase"}
    assert answers[3]["result"]["structuredContent"] == {"echo": "hello: one"}
    assert answers[4]["result"] == {}
    assert answers[5]["result"]["structuredContent"] == {"echo": "hello: two"}
    assert "Traceback" not in stderr


def test_a_question_to_a_client_whose_input_ended_is_not_waited_for(tmp_path: Path) -> None:
    """A high-risk call from a client that said it can answer questions, then closed its input:
    the question cannot be answered, so the call ends as declined and nothing runs."""
    asking = {**INITIALIZE, "params": {**INITIALIZE["params"], "capabilities": {"elicitation": {"form": {}}}}}
    code, answers, stderr = piped(demo_config(tmp_path), [asking, INITIALIZED, call(2, "demo_erase", {"target": "t"})])
    assert code == 0, stderr
    result = types.CallToolResult.model_validate(answers[2]["result"])
    assert result.is_error
    assert error_payload(result)["error"]["kind"] in {"declined_by_user", "approval_required"}


def surrogate_call(request_id: int, tool: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A call to `tool` whose first text argument holds a lone surrogate; and that argument's name."""
    properties = tool["inputSchema"].get("properties", {})
    texts = [name for name, schema in properties.items() if schema.get("type") == "string"]
    name = texts[0] if texts else "text"
    return call(request_id, tool["name"], {name: LONE}), name


def defaults_config(tmp_path: Path, extra: str = "") -> Path:
    """The embedded defaults' namespaces, state and data under tmp_path."""
    return write_config(
        tmp_path / "config.toml",
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n' + extra,
    )


def check_surrogate_answer(tool: dict[str, Any], argument: str, answer: dict[str, Any]) -> None:
    """An invalid_arguments result, valid for the tool, naming the argument."""
    result = types.CallToolResult.model_validate(answer["result"])
    check_call_result(types.Tool.model_validate(tool), tool["name"], result)
    error = error_payload(result)["error"]
    assert error["kind"] == "invalid_arguments", (tool["name"], error)
    assert error["message"] == f"{argument} is not valid Unicode text (it holds a lone surrogate)", tool["name"]


@pytest.mark.slow
def test_a_lone_surrogate_in_any_tools_arguments_is_answered_naming_the_argument(tmp_path: Path) -> None:
    """Every tool of the embedded defaults (and the demo): an invalid_arguments result that names
    the argument, for all of them from one stdin, and the server still exits 0 at the end."""
    config = defaults_config(tmp_path)
    code, listed, stderr = piped(config, [INITIALIZE, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    assert code == 0, stderr
    tools = listed[2]["result"]["tools"]
    assert len(tools) >= 10
    calls = [surrogate_call(3 + index, tool) for index, tool in enumerate(tools)]
    odd = [
        call(900, "files_read" + "\ud800", {"path": "x"}),  # in the tool's name
        {"jsonrpc": "2.0", "id": 901, "method": "tools/list", "params": {"cursor": LONE}},  # elsewhere
    ]
    code, answers, stderr = piped(config, [INITIALIZE, INITIALIZED, *(message for message, _ in calls), *odd])
    assert code == 0, stderr
    assert sorted(answers) == [1, *(message["id"] for message, _ in calls), 900, 901]
    for (message, argument), tool in zip(calls, tools, strict=True):
        check_surrogate_answer(tool, argument, answers[message["id"]])
    named = answers[900]
    assert named.get("error") or named["result"]["isError"] is True
    assert "error" in answers[901]
    assert "Traceback" not in stderr


TOKEN = "tok-surrogates-0123456789abcdef"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def posted(base: str, headers: dict[str, str], message: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC message POSTed (json.dumps escapes a lone surrogate, as clients do); its answer."""
    response = httpx2.post(f"{base}/mcp", content=json.dumps(message), headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(next(item for item in data if item)))
    return dict(response.json())


@pytest.mark.slow
def test_over_http_a_lone_surrogate_in_any_tools_arguments_gets_the_same_answer(tmp_path: Path) -> None:
    config = defaults_config(tmp_path, f'[http.tokens]\nprobe = "{TOKEN}"\n')
    with http_server(config) as base:
        response = httpx2.post(f"{base}/mcp", json=INITIALIZE, headers=bearer(TOKEN, **HEADERS), timeout=60)
        assert response.status_code == 200, response.text
        headers = bearer(TOKEN, **HEADERS, **{"MCP-Protocol-Version": "2025-11-25"})
        headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        assert httpx2.post(f"{base}/mcp", json=INITIALIZED, headers=headers, timeout=60).status_code == 202
        tools = posted(base, headers, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
        assert len(tools) >= 10
        for index, tool in enumerate(tools):
            message, argument = surrogate_call(3 + index, tool)
            answer = posted(base, headers, message)
            assert answer["id"] == message["id"]
            check_surrogate_answer(tool, argument, answer)
        named = posted(base, headers, call(900, "files_read" + "\ud800", {"path": "x"}))
        assert named["id"] == 900 and named["error"]["code"] == -32602
        assert "params.name is not valid Unicode" in named["error"]["message"]
        still = posted(base, headers, call(901, "files_list", {}))
        assert still["id"] == 901 and still["result"]["isError"] is False


@pytest.mark.parametrize("mode", [["--output", "results"], ["--stream"]], ids=["whole", "stream"])
def test_call_text_from_stdin_answers_every_call_read_before_the_end(tmp_path: Path, mode: list[str]) -> None:
    """`... | mcp-tools call-text`: each call of the reply gets its result, the last one (escaping a
    lone surrogate) its reason, with nothing after the end of input left out."""
    config = demo_config(tmp_path, servers='["demo", "files"]')
    calls = [
        {"id": "1", "type": "list_files", "operation": "list", "parameters": {"path": ""}},
        {"id": "2", "type": "demo_echo", "operation": "echo", "parameters": {"text": "hi"}},
        {"id": "3", "type": "read_file", "operation": "read", "parameters": {"path": LONE}},
    ]
    reply = json.dumps(calls) + "\n\u2702\ufe0f\U0001f431\nDone.\n"
    done = subprocess.run(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "call-text", *mode],
        input=reply.encode("utf-8"),
        capture_output=True,
        env=child_env(),
        cwd=str(ROOT),
        timeout=120,
    )
    assert done.returncode == 1  # one call failed
    out = done.stdout.decode("utf-8")
    if mode == ["--stream"]:
        events = [json.loads(line) for line in out.splitlines()]
        answered = {event["id"]: event["event"] for event in events if event.get("id")}
    else:
        answered = {item["id"]: "result" if "content" in item else "error" for item in json.loads(out)}
    assert [answered.get(key) for key in ("1", "2")] == ["result", "result"]
    assert len(answered) == 3 and "Traceback" not in done.stderr.decode(errors="replace")
