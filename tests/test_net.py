"""Host and Origin checks: exactly one allowed authority, nothing that merely starts like one."""

from __future__ import annotations

import pytest

from mcp_tools.util.net import host_allowed, host_origin_refusal, origin_allowed

LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "127.0.0.1", "LOCALHOST:80", "[::1]:9", "localhost"])
def test_our_own_hosts_pass(host: str) -> None:
    assert host_allowed(host, LOOPBACK_HOSTS)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8765, evil.example",
        "127.0.0.1:8765 evil.example",
        "127.0.0.1:8765@evil.example",
        "127.0.0.1:8765/evil",
        "127.0.0.1:",
        "127.0.0.1:port",
        "127.0.0.1.evil.example:80",
        "evil.example",
        "[::1]:9]:evil",
        "",
    ],
)
def test_attack_hosts_that_only_start_like_ours_are_refused(host: str) -> None:
    assert not host_allowed(host, LOOPBACK_HOSTS)


def test_a_name_without_port_pattern_matches_only_without_a_port() -> None:
    assert host_allowed("assistant.example.org", ["assistant.example.org"])
    assert not host_allowed("assistant.example.org:8080", ["assistant.example.org"])
    assert host_allowed("assistant.example.org:8443", ["assistant.example.org:8443"])


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:8765/evil",
        "http://127.0.0.1:8765/",
        "http://127.0.0.1:8765?x=1",
        "http://127.0.0.1:8765#x",
        "http://user@127.0.0.1:8765",
        "http://127.0.0.1:8765, https://evil.example",
        "https://127.0.0.1:8765",
        "http://127.0.0.1",
        "null",
        "http://evil.example:8765",
    ],
)
def test_attack_origins_with_a_path_or_anything_more_are_refused(origin: str) -> None:
    assert not origin_allowed(origin, LOOPBACK_ORIGINS)
    assert host_origin_refusal(["127.0.0.1:8765"], [origin], LOOPBACK_HOSTS, LOOPBACK_ORIGINS) == (
        403,
        "Invalid Origin header",
    )


def test_one_host_and_at_most_one_origin() -> None:
    assert host_origin_refusal(["127.0.0.1:8765"], [], LOOPBACK_HOSTS, LOOPBACK_ORIGINS) is None
    assert host_origin_refusal(["127.0.0.1:8765"], ["http://localhost:1"], LOOPBACK_HOSTS, LOOPBACK_ORIGINS) is None
    assert host_origin_refusal([], [], LOOPBACK_HOSTS, LOOPBACK_ORIGINS) == (421, "Invalid Host header")
    two_hosts = ["127.0.0.1:8765", "evil.example"]
    assert host_origin_refusal(two_hosts, [], LOOPBACK_HOSTS, LOOPBACK_ORIGINS) == (421, "Invalid Host header")
    two_origins = ["http://127.0.0.1:1", "http://127.0.0.1:1"]
    assert host_origin_refusal(["127.0.0.1:1"], two_origins, LOOPBACK_HOSTS, LOOPBACK_ORIGINS)[0] == 403  # type: ignore[index]
