"""Frontmatter of the common shape is read without PyYAML, and must read exactly as PyYAML reads it."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from mcp_tools.servers.notes.markdown import jsonable, parse_yaml
from mcp_tools.servers.notes.plainyaml import plain_frontmatter

# Pieces chosen to sit on both sides of the line the fast reader draws: YAML's booleans and nulls
# in every spelling, numbers, dates, indicators, comments, quotes, colons, indentation, tabs.
KEYS = ["tags", "aliases", "plugin-id", "publish", "a_b", "x1", "yes", "On", "null", "NULL", "y", "n", "T", "k" * 130]
WORDS = [
    "Dataview",
    "two words",
    "trailing ",
    "a.b-c_d",
    "etc.",
    "yes",
    "Yes",
    "YES",
    "yEs",
    "no",
    "No",
    "true",
    "True",
    "TRUE",
    "tRUE",
    "false",
    "on",
    "ON",
    "oN",
    "off",
    "Off",
    "null",
    "Null",
    "NULL",
    "nULL",
    "y",
    "n",
    "Y",
    "N",
    "nan",
    "NaN",
    "inf",
    ".inf",
    "~",
    "1",
    "0x1F",
    "1e3",
    "2024-01-05",
    "12:30",
    "@kepano",
    "#tag",
    "a #comment",
    "a: b",
    "'quoted'",
    '"quoted"',
    "[a, b]",
    "{a: 1}",
    "é",
    "a\tb",
    "-a",
    "- -",
    "!!str x",
    "&anchor",
    "*alias",
    "|",
    ">",
    "%",
    "a  b",
]


def reference(raw: str) -> tuple[dict[str, object], str | None] | None:
    """What PyYAML reads, as `parse_yaml` reports it; None where it refuses the text."""
    try:
        data = yaml.load(raw, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    return {str(k): jsonable(v) for k, v in data.items()}, None


def line(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return f"{rng.choice(KEYS)}:" + rng.choice(["", " ", "  "])
    if kind < 0.7:
        return f"{rng.choice(KEYS)}:{rng.choice([' ', '  ', '', chr(9)])}{rng.choice(WORDS)}"
    if kind < 0.95:
        return rng.choice(["-", "- ", "-  ", "  - ", "-\t"]) + (rng.choice(WORDS) if rng.random() < 0.8 else "")
    return rng.choice(["", "   ", "# comment", "---", "...", " key: value"])


def check(raw: str) -> bool:
    """True when the fast reader took `raw`; either way `parse_yaml` gives what PyYAML gives."""
    fast = plain_frontmatter(raw)
    expected = reference(raw)
    if fast is not None:
        assert expected is not None, raw
        # the same keys in the same order with the same values: the index stores it as JSON
        assert json.dumps(fast) == json.dumps(expected[0]), raw
    if expected is not None:
        assert json.dumps(parse_yaml(raw)) == json.dumps(expected), raw
    return fast is not None


@pytest.mark.parametrize(
    ("raw", "taken"),
    [
        ("plugin-id: dataview\naliases:\n- Dataview\ntags: \n- \npublish: true", True),
        ("aliases:\r\n- @kepano\r\ntags:\r\n- \r\npublish: true", False),  # "@" is reserved in YAML
        ("a: 1", False),
        ("a: b\nA: c\na: d", True),  # a repeated key keeps its place, with the last value
        ("a:\n- x\nb: y\na:\n- z", True),
        ("a:\nb:", True),
        ("title: On\ndraft: off\nx: Null\ny: nULL", True),
        ("yes: 1", False),
        ("a: b\n- c", False),  # an item under a key that has a value: YAML refuses it
        ("- a\n- b", False),  # a list, not a mapping
        ("a: b # note", False),
        ("a: b\n\nc: d", False),
        ("k" * 128 + ": v", True),
        ("k" * 129 + ": v", False),
    ],
)
def test_known_shapes(raw: str, taken: bool) -> None:
    assert check(raw) is taken


def test_random_documents_read_as_yaml_reads_them() -> None:
    rng = random.Random(40)
    taken = 0
    for _ in range(3000):
        raw = "\n".join(line(rng) for _ in range(rng.randint(1, 6)))
        if rng.random() < 0.2:
            raw = raw.replace("\n", "\r\n")
        if rng.random() < 0.1:
            raw += "\n"
        taken += check(raw)
    assert taken > 150  # the comparison above ran on many documents the fast reader took
