"""The starter config `mcp-tools config init` writes: assembled from the config models, every setting
documented with its default, and loading to the embedded defaults."""

from __future__ import annotations

import dataclasses
import importlib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from mcp_tools.composition.config_template import config_template, table_kind
from mcp_tools.core import config as config_module
from mcp_tools.core.config import CORE_MODELS, NAMESPACE_TABLES, Config, load_config
from mcp_tools.servers import CATALOG, SHARED_SECTIONS, load_namespace, shared_section_model

HEADER = re.compile(r"^(?:# )?\[\[?([\w.\"-]+)\]\]?$")
SETTING = re.compile(r"^# (?P<key>[A-Za-z_]\w*) =(?: (?P<value>.*))?$")


def tables_of(template: str) -> dict[str, list[tuple[str, str | None]]]:
    """Each table of the template (live or commented) with its `# key = value` lines, in order."""
    tables: dict[str, list[tuple[str, str | None]]] = {}
    current: list[tuple[str, str | None]] | None = None
    for line in template.splitlines():
        header = HEADER.match(line)
        if header:
            current = tables.setdefault(header[1], [])
            continue
        setting = SETTING.match(line)
        if setting and current is not None:
            current.append((setting["key"], setting["value"]))
    return tables


def all_models() -> Iterator[tuple[str, type[BaseModel]]]:
    """(table, model) for the core sections, every namespace and the shared sections."""
    yield from CORE_MODELS.items()
    for name in CATALOG:
        yield NAMESPACE_TABLES.get(name, name), load_namespace(name).config_model
    for name in SHARED_SECTIONS:
        yield name, shared_section_model(name)


def fields_of(table: str, model: type[BaseModel], tables: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(table, key, field) for every setting of a model and of the tables nested in it."""
    for key, field in model.model_fields.items():
        kind = table_kind(field.annotation)
        if kind is None:
            yield table, key, field
            continue
        nested = f"{table}.{key}"
        if kind[0] == "named":  # shown under an example name
            nested = next((name for name in tables if name.startswith(f"{nested}.")), f"{nested}.?")
        yield from fields_of(nested, kind[1], tables)


def test_the_template_is_valid_toml_that_loads_to_the_embedded_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config_template(), encoding="utf-8")
    loaded = load_config(path, {})
    defaults = Config(environ={})
    assert loaded.source == path
    for section in CORE_MODELS:
        assert getattr(loaded, section) == getattr(defaults, section), section
    assert loaded.sections == {}  # no namespace turned on, not even an opt-in one
    assert set(tomllib.loads(path.read_text(encoding="utf-8"))) == {"server", "policy", "http", "approvals", "state"}


def test_every_setting_of_every_model_is_in_the_template_under_its_table() -> None:
    tables = tables_of(config_template())
    missing = [
        f"[{table}] {key}"
        for root, model in all_models()
        for table, key, _ in fields_of(root, model, tables)
        if key not in dict(tables.get(table, []))
    ]
    assert not missing, missing
    assert {NAMESPACE_TABLES.get(name, name) for name in CATALOG} <= set(tables)


def test_every_default_is_shown_as_the_model_has_it() -> None:
    """Removing the "# " of a default's line gives exactly that default."""
    tables = tables_of(config_template())
    checked = 0
    for root, model in all_models():
        for table, key, field in fields_of(root, model, tables):
            if field.is_required() or field.get_default(call_default_factory=True) is None:
                continue
            shown = dict(tables[table])[key]
            value = tomllib.loads(f"{key} = {shown}")[key]
            parsed = TypeAdapter(Annotated[field.annotation, field]).validate_python(value)
            assert parsed == field.get_default(call_default_factory=True), f"[{table}] {key} = {shown}"
            checked += 1
    assert checked > 100


def test_settings_are_described_and_sections_introduced() -> None:
    template = config_template()
    prose = " ".join(line.removeprefix("# ") for line in template.splitlines())  # comments, unwrapped
    assert "Namespaces to run. Unset: every namespace that is configured" in prose
    assert "Runs only with this section (even empty) or with drive in [server] namespaces." in prose
    assert 'One of: "static", "dynamic".' in prose  # a Literal's choices
    assert "\n# bot_token =\n" in template and "The bot's token" in prose  # a secret: no value, only how to set it
    assert "\n# [http.outbound]\n" in template  # the http namespace's table is not the server's [http]


def test_a_setting_added_to_a_namespace_model_appears_without_touching_the_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    namespace = load_namespace("files")

    class Grown(namespace.config_model):  # type: ignore[name-defined,misc]
        sparkle_level: int = Field(default=7, description="How much the files sparkle.")

    module = importlib.import_module(CATALOG["files"])
    monkeypatch.setattr(module, "NAMESPACE", dataclasses.replace(namespace, config_model=Grown))
    tables = tables_of(config_template())
    assert ("sparkle_level", "7") in tables["files"]
    assert "# How much the files sparkle.\n# sparkle_level = 7\n" in config_template()


def test_a_setting_added_to_a_core_model_appears_without_touching_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    class Grown(config_module.ServerSettings):
        greeting: str = Field(default="hello", description="What the server says first.")

    monkeypatch.setitem(CORE_MODELS, "server", Grown)
    assert ("greeting", '"hello"') in tables_of(config_template())["server"]


def test_config_init_writes_the_template(tmp_path: Path) -> None:
    from mcp_tools.cli import main

    path = tmp_path / "sub" / "config.toml"
    assert main(["--config", str(path), "config", "init"]) == 0
    assert path.read_text(encoding="utf-8") == config_template()


def test_every_setting_of_every_model_has_a_description() -> None:
    """What the starter config and the docs say about a setting comes from its model."""
    tables = tables_of(config_template())
    bare = [
        f"[{table}] {key}"
        for root, model in all_models()
        for table, key, field in fields_of(root, model, tables)
        if not (field.description or "").strip()
    ]
    assert not bare, bare
