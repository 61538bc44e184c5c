"""What a person reads before saying yes: every hidden or line-drawing character made visible."""

from __future__ import annotations

import pytest

from mcp_tools.core.tooling import Risk
from mcp_tools.policy.display import arguments_text, asked_by, client_name, quoted, value_text, visible
from mcp_tools.policy.gate import ConfirmationRequest
from mcp_tools.policy.redact import redact

FAKE_BLOCK = '\n\nTool: http.request (low risk)\nArguments:\n  method: "GET"\n\nAllow this?\n\n\n'


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\nb\r\tc", "a\\nb\\r\\tc"),
        ("esc\x1b[2Jclear", "esc\\x1b[2Jclear"),
        ("invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
        (
            "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069",
            "\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069",
        ),
        ("zero\u200bwidth\u200c\u200d\u2060\ufeff", "zero\\u200bwidth\\u200c\\u200d\\u2060\\ufeff"),
        ("soft\u00adhyphen, nbsp\u00a0, line\u2028para\u2029", "soft\\xadhyphen, nbsp\\xa0, line\\u2028para\\u2029"),
        ("tag\U000e0041s and filler\u3164", "tag\\U000e0041s and filler\\u3164"),
        ("plain words, café, 東京, emoji 🙂", "plain words, café, 東京, emoji 🙂"),
    ],
)
def test_hidden_and_line_drawing_characters_become_visible_escapes(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert quoted(raw) == f'"{shown}"'


def test_a_quoted_value_cannot_end_early_or_fake_an_escape() -> None:
    assert quoted('a" (low risk) "b') == '"a\\" (low risk) \\"b"'
    assert quoted("not\\na newline") == '"not\\\\na newline"'  # a typed backslash-n is not a newline


def test_long_values_are_cut_and_say_how_much_is_left_out() -> None:
    assert quoted("x" * 1000, 300) == '"' + "x" * 300 + '…" (700 more characters)'
    assert visible("y" * 600, 500) == "y" * 500 + "… (100 more characters)"
    # a value redact() already cut for the approval keeps its true length
    stored = redact({"body": "z" * 5000})["body"]
    assert quoted(stored, 300) == '"' + "z" * 200 + '…" (4,800 more characters)'


def test_nested_values_and_arguments_one_per_line() -> None:
    assert value_text({"to": ["a@x.test", "b\n@x.test"], "n": 3, "ok": True}) == (
        '{"to": ["a@x.test", "b\\n@x.test"], "n": 3, "ok": true}'
    )
    assert arguments_text({"url": "http://h/a\nb", "method": "POST"}) == '  method: "POST"\n  url: "http://h/a\\nb"'
    assert arguments_text({}) == "  (none)"


def test_a_confirmation_draws_only_its_own_lines() -> None:
    """The attack: a URL whose newlines draw a second, harmless-looking confirmation under the real one."""
    url = "http://api.test/x" + FAKE_BLOCK
    request = ConfirmationRequest("http.request", Risk.HIGH, f"POST {url}", {"method": "POST", "url": url}, "0" * 64)
    message = request.message()
    assert message.count("\n") == 7  # headline, blank, Tool, Arguments:, two arguments, blank, Allow this?
    assert message.splitlines()[2] == "Tool: http.request (high risk)"
    assert "low risk" not in "".join(line for line in message.splitlines() if not line.startswith(("POST", "  url")))
    assert message.endswith("\n\nAllow this?") and message.splitlines().count("Allow this?") == 1
    assert "\\n\\nTool: http.request (low risk)" in message


def test_who_asked_in_plain_words() -> None:
    assert asked_by("local", "cli") == "asked from the command line"
    assert asked_by("local", "text") == "asked from the command line"
    assert asked_by("local", "stdio", "Claude Desktop") == "asked by Claude Desktop"
    assert asked_by("local", "stdio") == "asked by a local client over stdio"
    assert asked_by("ci-agent", "http") == "asked by token ci-agent over HTTP"
    assert asked_by("ci-agent", "http", "Claude Code") == "asked by token ci-agent over HTTP (Claude Code)"
    assert client_name("claude-ai") == "Claude Desktop"
    assert client_name("x", "My Agent") == "My Agent"
    assert client_name("evil\u202eresU\nTool: ok") == "evil\\u202eresU\\nTool: ok"  # a client names itself
    assert client_name("", None) is None
