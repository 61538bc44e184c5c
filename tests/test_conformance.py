"""The official MCP conformance suite against `mcp-tools serve --http`, for each protocol version it covers.

`@modelcontextprotocol/conformance` and the Node 22 it needs (the binaries the npm package
`node@22` installs) are pinned by `tests/conformance/package-lock.json` (2025-06-18 and
2025-11-25) and `tests/conformance_next/package-lock.json` (the suite's pre-release, for its
active 2026-07-28 scenarios). The suite cannot send a
bearer token, so it talks to the server through a small proxy on 127.0.0.1 that adds one and
forwards everything else as sent (Host and Origin too, for the DNS rebinding scenario).

Scenarios that call a reference server's fixture tools, prompts or resources (`test_simple_text`,
`test://static-text`, ...) are not applicable: they are listed below with the reason. Every
other scenario must pass.
"""

from __future__ import annotations

import asyncio
import json
import platform
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn

from tests.npm_packages import npm_ci
from tests.processes import ROOT, child_env, http_server, write_config

pytestmark = pytest.mark.slow
PINNED = ROOT / "tests" / "conformance"
PINNED_NEXT = ROOT / "tests" / "conformance_next"  # the suite's pre-release: the 2026-07-28 scenarios
SUITE = Path("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
TOKEN = "tok-conformance-0123456789abcdef"
VERSIONS = ["2025-06-18", "2025-11-25", "2026-07-28"]

FIXTURE = "calls the reference server's fixture"
NOT_APPLICABLE = {
    "tools-call-simple-text": f"{FIXTURE} tool test_simple_text",
    "tools-call-image": f"{FIXTURE} tool test_image_content",
    "tools-call-audio": f"{FIXTURE} tool test_audio_content",
    "tools-call-embedded-resource": f"{FIXTURE} tool test_embedded_resource",
    "tools-call-mixed-content": f"{FIXTURE} tool test_multiple_content_types",
    "tools-call-with-logging": f"{FIXTURE} tool test_tool_with_logging",
    "tools-call-error": f"{FIXTURE} tool test_error_handling",
    "tools-call-with-progress": f"{FIXTURE} tool test_tool_with_progress",
    "tools-call-sampling": f"{FIXTURE} tool test_sampling",
    "tools-call-elicitation": f"{FIXTURE} tool test_elicitation",
    "elicitation-sep1034-defaults": f"{FIXTURE} tool test_elicitation_sep1034_defaults",
    "elicitation-sep1330-enums": f"{FIXTURE} tool test_elicitation_sep1330_enums",
    "json-schema-2020-12": f"{FIXTURE} tool json_schema_2020_12_tool",
    "server-sse-polling": f"{FIXTURE} tool test_reconnection",
    "server-sse-multiple-streams": f"{FIXTURE} tool test_reconnection",
    "completion-complete": f"{FIXTURE} prompt test_prompt_with_arguments (this server has no prompts)",
    "resources-read-text": f"{FIXTURE} resource test://static-text",
    "resources-read-binary": f"{FIXTURE} resource test://static-binary",
    "resources-templates-read": f"{FIXTURE} resource template test://template/{{id}}/data",
    "resources-subscribe": f"{FIXTURE} resource test://static-text",
    "resources-unsubscribe": f"{FIXTURE} resource test://static-text",
    "prompts-get-simple": f"{FIXTURE} prompt test_simple_prompt (this server has no prompts)",
    "prompts-get-with-args": f"{FIXTURE} prompt test_prompt_with_arguments (this server has no prompts)",
    "prompts-get-embedded-resource": f"{FIXTURE} prompt test_prompt_with_embedded_resource",
    "prompts-get-with-image": f"{FIXTURE} prompt test_prompt_with_image",
}
# The pre-release lists these 2026-07-28 scenarios outside its active suite (draft or pending), so
# the run leaves them out. Tried with `--suite all` on 0.2.0-alpha.12: caching,
# http-header-validation, sep-2164-resource-not-found and input-required-result-ignore-extra-params
# / -unsupported-methods pass; the other input-required-result-* and
# http-custom-header-server-validation need the reference server's fixture tools
# (test_input_required_result_*, tools with x-mcp-header annotations).
# Outside the active suite too, but run on its own below: every check of it that applies passes.
RUN_ON_ITS_OWN = {"server-stateless"}
# Checks of server-stateless that call the reference server's fixture tools, with why.
STATELESS_NEEDS_FIXTURE = {
    "sep-2575-server-rejects-undeclared-capability": f"{FIXTURE} tool test_missing_capability",
    "sep-2575-missing-capability-http-400": f"{FIXTURE} tool test_missing_capability (its -32021 answer's status)",
    # subscriptions/listen is served (documents, and tool list changes in dynamic discovery), so the
    # SDK declares every listChanged on 2026-07-28; these checks change the lists through fixture tools
    "sep-2575-server-sends-prompts-list-changed-on-subscription": f"{FIXTURE} tool test_trigger_prompt_change",
    "sep-2575-server-sends-tools-list-changed-on-subscription": f"{FIXTURE} tool test_trigger_tool_change",
}
NOT_ACTIVE = {
    "caching",
    "http-header-validation",
    "http-custom-header-server-validation",
    "sep-2164-resource-not-found",
    *(
        f"input-required-result-{name}"
        for name in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "unsupported-methods",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
            "validate-input",
        )
    ),
}


def node_binary(prefix: Path) -> Path:
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    if arch is None:
        pytest.skip(f"no pinned Node 22 build for {platform.machine()}")
    return prefix / "node_modules" / f"node-linux-{arch}" / "bin" / "node"


def installed(pinned: Path) -> tuple[Path, Path]:
    """(node 22, the conformance CLI), installed from a pinned lock file."""
    prefix = npm_ci(pinned, SUITE)
    node = node_binary(prefix)
    assert node.is_file(), f"npm ci did not install {node}"
    return node, prefix / SUITE


def suite_for(version: str) -> tuple[Path, Path]:
    """The released suite for the versions it covers; its pre-release for 2026-07-28."""
    return installed(PINNED_NEXT if version == "2026-07-28" else PINNED)


class TokenProxy:
    """Forwards every request to `upstream` as sent, adding the bearer token; streams answers back."""

    def __init__(self, upstream: str, token: str) -> None:
        self.upstream, self.token = upstream, token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        dropped = {b"authorization", b"content-length", b"transfer-encoding", b"connection"}
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in dropped]
        headers.append((b"authorization", f"Bearer {self.token}".encode()))
        target = self.upstream + scope["path"] + (f"?{scope['query_string'].decode()}" if scope["query_string"] else "")
        async with httpx2.AsyncClient(timeout=None) as client:
            request = client.build_request(scope["method"], target, headers=headers, content=body)
            response = await client.send(request, stream=True)
            try:
                framing = (b"content-length", b"transfer-encoding")
                kept = [(k, v) for k, v in response.headers.raw if k.lower() not in framing]
                await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                await response.aclose()


@pytest.fixture
def proxied_server(tmp_path: Path) -> Iterator[str]:
    """`serve --http` (the files namespace, all tools) behind the token-adding proxy; yields the proxy's /mcp URL."""
    (tmp_path / "data" / "files").mkdir(parents=True)
    config = write_config(
        tmp_path / "config.toml",
        f'[server]\nservers = ["files"]\ntools = ["files"]\n'
        f'state_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[http.tokens]\nconformance = "{TOKEN}"\n',
    )
    with http_server(config) as base, socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(64)  # connections wait in the backlog until the proxy serves: nothing to poll
        port = listening.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(TokenProxy(base, TOKEN), log_level="warning", lifespan="off"))
        thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[listening])), daemon=True)
        thread.start()
        try:
            yield f"http://localhost:{port}/mcp"
        finally:
            server.should_exit = True
            server.force_exit = True  # the suite's SSE streams stay open: do not wait for them to end
            thread.join(timeout=10)


def scenarios(node: Path, cli: Path, version: str) -> list[str]:
    listed = subprocess.run(
        [str(node), str(cli), "list", "--server", "--spec-version", version],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [line.strip()[2:].split(" ")[0] for line in listed.stdout.splitlines() if line.strip().startswith("- ")]


def run_suite(node: Path, cli: Path, url: str, version: str, out: Path, *only: str) -> dict[str, list[dict[str, Any]]]:
    """The suite's active scenarios for one protocol version (or `--scenario NAME`); the checks of each, by scenario."""
    done = subprocess.run(
        [str(node), str(cli), "server", "--url", url, "--spec-version", version, "-o", str(out), *only],
        capture_output=True,
        text=True,
        timeout=600,
        env=child_env(),
    )
    results = {}
    for checks in out.glob("server-*/checks.json"):
        named = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT", checks.parent.name)
        assert named, checks.parent.name
        results[named[1]] = json.loads(checks.read_text())
    assert results, f"the suite saved no results:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return results


@pytest.mark.parametrize("version", VERSIONS)
def test_every_applicable_conformance_scenario_passes(proxied_server: str, tmp_path: Path, version: str) -> None:
    node, cli = suite_for(version)
    results = run_suite(node, cli, proxied_server, version, tmp_path / "out")
    assert set(results) <= set(scenarios(node, cli, version))
    applicable = {name: checks for name, checks in results.items() if name not in NOT_APPLICABLE}
    failures = {
        name: [check for check in checks if check["status"] in ("FAILURE", "WARNING")] or "no checks"
        for name, checks in applicable.items()
        if not checks or any(check["status"] in ("FAILURE", "WARNING") for check in checks)
    }
    assert not failures, json.dumps(failures, indent=1)[:6000]
    expected = {"tools-list", "resources-list", "prompts-list"}
    if version != "2026-07-28":  # sessionless: no initialize, ping or logging/setLevel
        expected |= {"server-initialize", "ping", "logging-set-level"}
    if version != "2025-06-18":
        expected.add("dns-rebinding-protection")
    assert expected <= set(applicable)


def test_the_stateless_scenario_passes_every_check_that_applies(proxied_server: str, tmp_path: Path) -> None:
    """server-stateless (SEP-2575) of the 2026-07-28 pre-release: per-request `_meta`, discovery,
    version negotiation (-32022 listing what discover lists, with the request's id), header
    mismatches, removed methods. Its checks that call fixture tools are the only ones let off."""
    node, cli = suite_for("2026-07-28")
    [checks] = run_suite(
        node, cli, proxied_server, "2026-07-28", tmp_path / "out", "--scenario", "server-stateless"
    ).values()
    failing = [
        check
        for check in checks
        if check["status"] in ("FAILURE", "WARNING") and check["id"] not in STATELESS_NEEDS_FIXTURE
    ]
    assert not failing, json.dumps(failing, indent=1)[:6000]
    passed = {check["id"] for check in checks if check["status"] == "SUCCESS"}
    assert {
        "sep-2575-server-unsupported-version-error",
        "sep-2575-http-server-unsupported-version-400",
        "sep-2575-http-server-header-mismatch-400",
        "sep-2575-http-server-error-jsonrpc-id",
        "sep-2575-server-implements-discover",
        "sep-2575-server-sends-subscription-ack",
        "sep-2575-server-tags-subscription-id",
        "sep-2575-server-honors-notification-filter",
    } <= passed


def test_every_scenario_the_suite_has_is_known() -> None:
    """A new suite version with new scenarios shows up here, not as a silent skip."""
    known = (
        set(NOT_APPLICABLE)
        | NOT_ACTIVE
        | RUN_ON_ITS_OWN
        | {
            "server-initialize",
            "logging-set-level",
            "ping",
            "tools-list",
            "resources-list",
            "prompts-list",
            "dns-rebinding-protection",
        }
    )
    for version in VERSIONS:
        assert set(scenarios(*suite_for(version), version)) <= known
