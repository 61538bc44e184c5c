"""The result budget at the gate: a result that would not fit is cut validly and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from mcp_tools.core.tooling import Arguments, Namespace, Output, Risk, ToolSpec
from mcp_tools.servers import CATALOG
from tests.budgets import assert_fits, structured, text
from tests.harness import connect, failure


class SizeArgs(Arguments):
    size: int = Field(ge=0, le=5_000_000)


class Row(Output):
    name: str
    body: str


class PageOut(Output):
    title: str
    rows: list[Row]
    content: str
    next_offset: int | None


class StrictOut(Output):
    rows: list[str] = Field(min_length=1000)


async def page(service: object, args: SizeArgs, ctx: object) -> PageOut:
    rows = [Row(name=f"row {i}", body="b" * 200) for i in range(args.size // 200)]
    return PageOut(title="big", rows=rows, content="c\n" * (args.size // 2), next_offset=None)


async def strict(service: object, args: SizeArgs, ctx: object) -> StrictOut:
    return StrictOut(rows=["x" * max(1, args.size // 1000)] * 1000)


class PictureOut(Output):
    caption: str


async def picture(service: object, args: SizeArgs, ctx: object) -> PictureOut:
    return PictureOut(caption="a picture").with_image(b"\x89PNG" + b"\x00" * args.size, "image/png")


def _spec(name: str, handler: object, out: type[Output]) -> ToolSpec:
    return ToolSpec(name, "A big result.", SizeArgs, out, handler, Risk.LOW, lambda a: name, read_only=True)  # type: ignore[arg-type]


NAMESPACE = Namespace(
    name="big",
    description="Results of any size.",
    config_model=SizeArgs.__base__,  # type: ignore[arg-type]
    create=lambda section, environment: object(),
    tools=(
        _spec("big.page", page, PageOut),
        _spec("big.strict", strict, StrictOut),
        _spec("big.picture", picture, PictureOut),
    ),
)


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, object]]:
    monkeypatch.setitem(CATALOG, "big", __name__)
    return {"big": {}}


@pytest.mark.anyio
async def test_a_result_over_the_budget_is_cut_validly_and_says_what_was_left_out(tmp_path: Path, big: dict) -> None:
    async with connect(tmp_path, big) as client:
        result = await client.call_tool("big_page", {"size": 4_000_000})
    assert_fits(result, gate_may_cut=True)
    data = structured(result)  # the conftest checked it against the outputSchema
    assert data["title"] == "big"
    assert data["content"].endswith("…[cut]") or len(data["rows"]) < 20_000
    said = text(result)
    assert "20,000-token result budget" in said and "more" in said


@pytest.mark.anyio
async def test_a_small_result_passes_untouched(tmp_path: Path, big: dict) -> None:
    async with connect(tmp_path, big) as client:
        result = await client.call_tool("big_page", {"size": 2_000})
    data = structured(result)
    assert len(data["rows"]) == 10 and data["content"] == "c\n" * 1000
    assert "budget" not in text(result)


@pytest.mark.anyio
async def test_the_budget_is_configured_in_the_server_section(tmp_path: Path, big: dict) -> None:
    settings = {**big, "server": {"max_result_tokens": 2_000}}
    async with connect(tmp_path, settings) as client:
        result = await client.call_tool("big_page", {"size": 30_000})
    assert_fits(result, 2_000, gate_may_cut=True)
    assert "2,000-token result budget" in text(result)


@pytest.mark.anyio
async def test_a_result_that_cannot_be_cut_validly_is_a_too_large_error_not_an_over_budget_one(
    tmp_path: Path, big: dict
) -> None:
    async with connect(tmp_path, big) as client:
        result = await client.call_tool("big_strict", {"size": 1_000_000})
    assert failure(result)["kind"] == "too_large"
    assert_fits(result, gate_may_cut=True)


@pytest.mark.anyio
async def test_an_image_over_the_budget_is_left_out_and_said_so(tmp_path: Path, big: dict) -> None:
    import mcp_types as types

    async with connect(tmp_path, big) as client:
        small = await client.call_tool("big_picture", {"size": 1_000})
        large = await client.call_tool("big_picture", {"size": 200_000})
    assert [type(block) for block in small.content] == [types.TextContent, types.ImageContent]
    assert [type(block) for block in large.content] == [types.TextContent]
    assert "the image was left out" in text(large) and structured(large) == {"caption": "a picture"}
    assert_fits(large)


def test_the_budget_has_sane_bounds(tmp_path: Path) -> None:
    from mcp_tools.core.config import ConfigError
    from tests.harness import make_config

    with pytest.raises((ConfigError, ValueError)):
        make_config(tmp_path, {"server": {"max_result_tokens": 10}})


def test_no_schema_offers_a_page_larger_than_the_budget_holds() -> None:
    """Every page-size argument of every tool has a maximum, and the largest fits the budget."""
    from mcp_tools.core.tooling import MAX_PAGE_CHARS
    from mcp_tools.servers import load_namespace

    caps = {"max_chars": MAX_PAGE_CHARS, "limit": 200, "top_k": 50, "max_results": 50}
    seen = 0
    for name in CATALOG:
        for spec in load_namespace(name).tools:
            properties = spec.input_model.model_json_schema().get("properties", {})
            for argument, cap in caps.items():
                if argument not in properties:
                    continue
                if spec.name == "files.read" and argument == "limit":
                    cap = MAX_PAGE_CHARS  # bytes there, not items
                field = properties[argument]
                options = field.get("anyOf", [field])
                maxima = [option.get("maximum") for option in options if option.get("type") == "integer"]
                assert maxima and all(m is not None and m <= cap for m in maxima), (spec.name, argument, field)
                seen += 1
    assert seen >= 20  # the readers and lists of every namespace
