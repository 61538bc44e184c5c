"""Icons: the server's and each namespace's, small inline SVGs where hosts show them, never in tool
definitions (so the tool list and its context cost are what they were)."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import mcp_types as types
import pytest

from mcp_tools.resources.icons import MARKS, MAX_ICON_BYTES, icon
from mcp_tools.servers import CATALOG
from tests.approvals.helpers import TOKENS, http_client
from tests.harness import connect
from tests.processes import demo_config, http_server

pytestmark = pytest.mark.anyio


def svg_of(found: types.Icon) -> ElementTree.Element:
    prefix = "data:image/svg+xml;base64,"
    assert found.src.startswith(prefix) and found.mime_type == "image/svg+xml" and found.sizes == ["any"]
    assert len(found.src) <= MAX_ICON_BYTES
    return ElementTree.fromstring(base64.b64decode(found.src[len(prefix) :]))


def test_every_namespace_has_its_own_small_icon() -> None:
    assert set(CATALOG) <= set(MARKS)
    sources = {icon(name).src for name in CATALOG} | {icon(None).src}
    assert len(sources) == len(CATALOG) + 1
    for name in [*CATALOG, None]:
        assert svg_of(icon(name)).tag == "{http://www.w3.org/2000/svg}svg"


async def test_the_server_shows_its_icon_and_tools_carry_none(tmp_path: Path) -> None:
    settings = {"server": {"servers": ["files"]}}
    async with connect(tmp_path, settings) as client:
        info = client.server_info
        tools = (await client.list_tools()).tools
        templates = (await client.list_resource_templates()).resource_templates
    assert info.icons == [icon(None)]
    assert tools and all(tool.icons is None for tool in tools)
    assert [template.icons for template in templates] == [[icon("files")]]


async def test_a_namespace_endpoint_shows_the_namespaces_icon(tmp_path: Path) -> None:
    config = demo_config(tmp_path, TOKENS, servers='["demo", "files"]')
    with http_server(config) as base:
        async with http_client(base + "/files/mcp") as client:
            assert client.server_info.icons == [icon("files")]
        async with http_client(base + "/mcp") as client:
            assert client.server_info.icons == [icon(None)]
