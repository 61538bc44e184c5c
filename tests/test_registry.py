"""`server.json`, what the MCP Registry lists: valid for the registry, and true of this project.

The registry validates against its published JSON schema (2025-12-11, `$schema` below). When a
copy of that schema is at hand (`tests/registry/server.schema.json`, or `schemas/2025-12-11/`
in the shared folder beside the checkout) the file is validated against it with `jsonschema`;
the rules the registry states are also checked here directly, always: the name, the
description's length, exact versions equal to the project's, the PyPI package and the command
it runs, the remote's shape, and the README line that proves the PyPI package is this server's.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import pytest
from jsonschema import Draft7Validator

from mcp_tools import __version__
from mcp_tools.cli.main import build_parser
from mcp_tools.core.config import CONFIG_ENV, TELEGRAM_TOKEN_ENV
from mcp_tools.util.commands import DISTRIBUTION
from tests.processes import ROOT

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SCHEMA_COPIES = (
    ROOT / "tests" / "registry" / "server.schema.json",
    ROOT.parent / "shared" / "schemas" / "2025-12-11" / "server.schema.json",
)


def server() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    return loaded


def test_server_json_validates_against_the_published_schema() -> None:
    copy = next((path for path in SCHEMA_COPIES if path.is_file()), None)
    if copy is None:
        pytest.skip(f"no copy of {SCHEMA_URL} at {' or '.join(map(str, SCHEMA_COPIES))}")
    schema = json.loads(copy.read_text(encoding="utf-8"))
    assert schema["$id"] == SCHEMA_URL
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(server())]
    assert problems == []


def test_server_json_says_what_the_registry_requires_and_what_is_true_here() -> None:
    data = server()
    assert data["$schema"] == SCHEMA_URL
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", data["name"]) and 3 <= len(data["name"]) <= 200
    assert 1 <= len(data["description"]) <= 100 and 1 <= len(data["title"]) <= 100
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert data["version"] == __version__ == project["version"]
    [package] = data["packages"]
    assert (package["registryType"], package["identifier"], package["version"]) == ("pypi", DISTRIBUTION, __version__)
    assert package["transport"] == {"type": "stdio"}
    # `uvx mcp-tools-suite serve`: the package's own name is a command, and its arguments a real one
    assert project["scripts"][DISTRIBUTION] == project["scripts"]["mcp-tools"]
    arguments = [argument["value"] for argument in package["packageArguments"]]
    assert getattr(build_parser().parse_args(arguments), "handler", None) is not None
    names = {variable["name"]: variable for variable in package["environmentVariables"]}
    assert set(names) == {CONFIG_ENV, TELEGRAM_TOKEN_ENV} and names[TELEGRAM_TOKEN_ENV]["isSecret"] is True
    [remote] = data["remotes"]
    assert remote["type"] == "streamable-http" and re.fullmatch(r"https://\{host\}/mcp", remote["url"])
    [authorization] = remote["headers"]
    assert authorization["value"] == "Bearer {token}" and authorization["isSecret"] is True


def test_the_readme_names_the_server_for_the_registrys_pypi_check() -> None:
    """The registry reads the PyPI description (this README) for `mcp-name: <server name>`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"mcp-name: (\S+)", readme) == [server()["name"]]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] == "README.md"
