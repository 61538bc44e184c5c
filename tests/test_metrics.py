"""`serve --http --metrics-port N`: Prometheus metrics on 127.0.0.1:N with bounded labels only."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.harness import elicitation_handler, failure, ok
from tests.processes import bearer, demo_config, free_port, http_server, run_cli

TOKEN = "tok-metrics-0123456789"
SECRET_ARGUMENT = "do-not-label-me-4242"


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the one sample of `name` whose labels include `labels`."""
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{key}="{value}"' in line for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


@pytest.mark.anyio
async def test_metrics_count_calls_approvals_and_refusals_with_bounded_labels(tmp_path: Path) -> None:
    # the person answers this token's forms, so its form's yes counts as the elicitation channel
    config = demo_config(tmp_path, f'[http.tokens.laptop]\ntoken = "{TOKEN}"\nperson_answers_forms = true\n')
    metrics_port = free_port()
    with http_server(config, "--metrics-port", str(metrics_port)) as base:
        async with (
            httpx2.AsyncClient(headers=bearer(TOKEN), timeout=30) as http,
            Client(
                streamable_http_client(base + "/mcp", http_client=http),  # type: ignore[arg-type]
                elicitation_callback=elicitation_handler("accept"),
            ) as client,
        ):
            for _ in range(3):
                ok(await client.call_tool("demo_echo", {"text": SECRET_ARGUMENT}))
            assert ok(await client.call_tool("demo_erase", {"target": "t"})) == {"erased": "t"}
            for index in range(5):  # ATTACK: made-up names must not each become a time series
                assert (
                    failure(await client.call_tool(f"made_up_{index}_{SECRET_ARGUMENT}", {}))["kind"] == "unknown_tool"
                )
        text = httpx2.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
    assert sample(text, "mcp_tools_calls_total", tool="demo.echo", risk="low", outcome="ok") == 3
    assert sample(text, "mcp_tools_calls_total", tool="demo.erase", risk="high", outcome="ok") == 1
    assert sample(text, "mcp_tools_calls_total", tool="unknown", outcome="unknown_tool") == 5
    assert sample(text, "mcp_tools_refusals_total", kind="unknown_tool") == 5
    assert sample(text, "mcp_tools_approvals_total", channel="elicitation", decision="approved") == 1
    assert (
        sample(
            text,
            "mcp_server_operation_duration_seconds_count",
            mcp_method_name="tools/call",
            gen_ai_tool_name="demo.echo",
        )
        == 3
    )
    assert sample(text, "mcp_tools_state_store_duration_seconds_count", engine="sqlite")
    assert SECRET_ARGUMENT not in text and TOKEN not in text and "laptop" not in text


def test_metrics_need_a_free_port(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(demo_config(tmp_path), "serve", "--http", "--port", "0", "--metrics-port", str(port))
    assert result.returncode == 2 and f"--metrics-port {port}" in result.stderr


def test_attack_a_rebinding_page_reads_no_metrics_and_a_scraper_sends_the_token(tmp_path: Path) -> None:
    """Before: `/metrics` answered any Host, so a page at evil.example resolved to 127.0.0.1 read it."""
    import socket

    scrape_token = "scrape-0123456789-abcdefghijklmnop"
    config = demo_config(tmp_path, f'[http]\nmetrics_token = "{scrape_token}"\n[http.tokens]\nlaptop = "{TOKEN}"\n')
    metrics_port = free_port()
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    with http_server(config, "--metrics-port", str(metrics_port)):
        rebound = httpx2.get(url, headers={"Host": f"evil.example:{metrics_port}", **bearer(scrape_token)}, timeout=10)
        assert rebound.status_code == 421 and "mcp_tools" not in rebound.text
        from_page = httpx2.get(url, headers={"Origin": "https://evil.example", **bearer(scrape_token)}, timeout=10)
        assert from_page.status_code == 403 and "mcp_tools" not in from_page.text
        anonymous = httpx2.get(url, timeout=10)
        assert anonymous.status_code == 401 and "mcp_tools" not in anonymous.text
        assert httpx2.get(url, headers=bearer("scrape-wrong-token"), timeout=10).status_code == 401
        scraped = httpx2.get(url, headers=bearer(scrape_token), timeout=10)
        assert scraped.status_code == 200 and "mcp_tools_calls" in scraped.text
        assert httpx2.get(url.replace("127.0.0.1", "localhost"), headers=bearer(scrape_token)).status_code == 200
        with socket.create_connection(("127.0.0.1", metrics_port), timeout=30) as stalled:
            stalled.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest of the head
            assert stalled.recv(65536) == b""  # dropped after its timeout, not kept
