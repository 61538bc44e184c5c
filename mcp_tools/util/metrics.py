"""Prometheus metrics for `serve --http --metrics-port N` (prometheus-client, imported only then).

Label values are bounded: canonical tool names of the catalog (anything else is `unknown`), risk
levels, error kinds, channels and decisions. Never arguments, never principals or their tokens.
Without `--metrics-port` every recording is a no-op.
"""

from __future__ import annotations

import threading
from typing import Any

# seconds; calls range from a cached read to a person's approval
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
STORE_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5)
CHANNELS = frozenset({"cli", "page", "telegram", "elicitation", "notify"})
METRICS_SOCKET_TIMEOUT = 10.0  # seconds a scrape's connection may stall


class Metrics:
    """Records nothing: what runs when metrics are off."""

    enabled = False

    def call(self, tool: str, risk: str | None, outcome: str, seconds: float) -> None:
        pass

    def approval(self, channel: str, decision: str) -> None:
        pass

    def store(self, engine: str, seconds: float) -> None:
        pass


class PrometheusMetrics(Metrics):
    enabled = True

    def __init__(self, known_tools: set[str]) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.known_tools = known_tools
        self.registry = CollectorRegistry()
        # The OpenTelemetry MCP conventions' `mcp.server.operation.duration` (seconds), with their
        # attribute names, in Prometheus spelling.
        self.operation = Histogram(
            "mcp_server_operation_duration_seconds",
            "Duration of MCP operations handled by the server (mcp.server.operation.duration)",
            ["mcp_method_name", "gen_ai_tool_name", "error_type"],
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.calls = Counter(
            "mcp_tools_calls",
            "Tool calls by tool, risk and outcome",
            ["tool", "risk", "outcome"],
            registry=self.registry,
        )
        self.approvals = Counter(
            "mcp_tools_approvals",
            "Approval decisions by channel and decision",
            ["channel", "decision"],
            registry=self.registry,
        )
        self.refusals = Counter(
            "mcp_tools_refusals", "Calls that did not run, by kind", ["kind"], registry=self.registry
        )
        self.store_latency = Histogram(
            "mcp_tools_state_store_duration_seconds",
            "Time spent in the state store per transaction",
            ["engine"],
            buckets=STORE_BUCKETS,
            registry=self.registry,
        )

    def call(self, tool: str, risk: str | None, outcome: str, seconds: float) -> None:
        name = tool if tool in self.known_tools else "unknown"
        error = "" if outcome == "ok" else outcome
        self.operation.labels("tools/call", name, error).observe(seconds)
        self.calls.labels(name, risk or "none", outcome).inc()
        if outcome != "ok":
            self.refusals.labels(outcome).inc()

    def approval(self, channel: str, decision: str) -> None:
        self.approvals.labels(channel if channel in CHANNELS else "other", decision).inc()

    def store(self, engine: str, seconds: float) -> None:
        self.store_latency.labels(engine).observe(seconds)


_current: Metrics = Metrics()
_lock = threading.Lock()


def current() -> Metrics:
    return _current


def serve_metrics(port: int, known_tools: set[str], token: str | None = None) -> Any:
    """Start recording and serve `/metrics` on 127.0.0.1:`port`; returns the HTTP server.

    Only requests whose Host names this machine (and whose Origin, if any, is a loopback page)
    are answered, so a web page that rebinds its name to 127.0.0.1 reads nothing; with `token`,
    a scraper must send it as a bearer token. A connection that stalls is dropped after
    `METRICS_SOCKET_TIMEOUT` seconds."""
    global _current
    import threading
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from prometheus_client import make_wsgi_app

    class Handler(WSGIRequestHandler):
        timeout = METRICS_SOCKET_TIMEOUT

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a stalled or broken scrape: its connection is closed, nothing to report

    with _lock:
        metrics = PrometheusMetrics(known_tools)
        app = guarded_metrics(make_wsgi_app(metrics.registry), token)
        server = make_server("127.0.0.1", port, app, Server, handler_class=Handler)
        threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
        _current = metrics
    return server


def guarded_metrics(app: Any, token: str | None) -> Any:
    """The WSGI app behind the Host/Origin rules of `/mcp` on loopback, and `token` when set."""
    import hmac

    from mcp_tools.util.net import LOOPBACK_HOSTS, LOOPBACK_ORIGINS, host_origin_refusal

    def guarded(environ: dict[str, Any], start_response: Any) -> Any:
        host, origin = environ.get("HTTP_HOST"), environ.get("HTTP_ORIGIN")  # repeated ones arrive joined
        refused = host_origin_refusal(
            [host] if host is not None else [], [origin] if origin is not None else [], LOOPBACK_HOSTS, LOOPBACK_ORIGINS
        )
        headers = [("Content-Type", "text/plain; charset=utf-8")]
        if refused is not None:
            status = f"{refused[0]} {'Misdirected Request' if refused[0] == 421 else 'Forbidden'}"
            start_response(status, headers)
            return [refused[1].encode()]
        if token is not None:
            scheme, _, presented = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(), token.encode()):
                start_response("401 Unauthorized", [*headers, ("WWW-Authenticate", 'Bearer realm="metrics"')])
                return [b"send Authorization: Bearer <[http] metrics_token>"]
        return app(environ, start_response)

    return guarded
