"""The commented starter config that `mcp-tools config init` writes, assembled from the config models.

Every field of every model (the core sections in `mcp_tools.core.config`, each namespace's own model,
the shared `[google]`) becomes a commented `# key = default` line under its table, with the field's
description above it, so a field added to a model is documented here without further work. Only
the tables of the core sections are live; loading the file gives the embedded defaults.
"""

from __future__ import annotations

import json
import re
import textwrap
import types
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

WIDTH = 100
INTRO = """\
# mcp-tools configuration. Every setting is optional: a commented line shows the default (or, for a
# setting unset by default, an example); remove the "# " to change it.
# Secrets may also come from the environment (see the README), which keeps them out of this file.
"""
UNSET = object()


def config_template() -> str:
    """The whole starter file: core sections first, then every namespace, then shared sections."""
    from mcp_tools.core.config import CORE_MODELS, NAMESPACE_TABLES
    from mcp_tools.servers import CATALOG, OPT_IN, SHARED_SECTIONS, load_namespace, shared_section_model

    parts = [INTRO]
    for name, model in CORE_MODELS.items():
        parts.append("\n".join(render_table(name, model, live=True, intro=model_intro(model))))
    for name in CATALOG:
        namespace = load_namespace(name)
        own = model_intro(namespace.config_model)  # unless it repeats the namespace's description
        intro = [namespace.description, *(text for text in own if text[:24] != namespace.description[:24])]
        if name in OPT_IN:
            intro.append(f"Runs only with this section (even empty) or with {name} in [server] namespaces.")
        table = NAMESPACE_TABLES.get(name, name)
        parts.append("\n".join(render_table(table, namespace.config_model, live=False, intro=intro)))
    for name in SHARED_SECTIONS:
        model = shared_section_model(name)
        parts.append("\n".join(render_table(name, model, live=False, intro=model_intro(model))))
    return "\n".join(parts)


def model_intro(model: type[BaseModel]) -> list[str]:
    """A model's own docstring, less the sentence that merely names its table."""
    doc = model.__doc__ if "__doc__" in vars(model) else None
    text = re.sub(r"^The `\[[\w.]+\]` section[.;:]?\s*", "", " ".join((doc or "").split()))
    return [text[0].upper() + text[1:]] if text else []


def render_table(
    table: str, model: type[BaseModel], *, live: bool, intro: Sequence[str] = (), array: bool = False
) -> Iterator[str]:
    """`[table]` (commented unless `live`) with its settings, then its sub-tables, as TOML allows."""
    yield ""
    for paragraph in intro:
        yield from comment(paragraph)
    header = f"[[{table}]]" if array else f"[{table}]"
    yield header if live else f"# {header}"
    nested: list[tuple[str, FieldInfo]] = []
    for key, field in model.model_fields.items():
        if table_kind(field.annotation) is not None:
            nested.append((key, field))
            continue
        yield from render_setting(key, field)
    for key, field in nested:
        kind, sub_model = table_kind(field.annotation) or ("table", BaseModel)
        default = field.get_default(call_default_factory=True)
        text = [field.description] if field.description else model_intro(sub_model)
        if kind == "table":
            yield from render_table(f"{table}.{key}", sub_model, live=live and default is not None, intro=text)
        elif kind == "array":
            yield from render_table(f"{table}.{key}", sub_model, live=False, intro=text, array=True)
        else:  # a table of named entries: one shown under an example name
            name = str(next(iter(field.examples or ["NAME"])))
            shown = name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)  # a dotted host is quoted
            yield from render_table(f"{table}.{key}.{shown}", sub_model, live=False, intro=text)


def render_setting(key: str, field: FieldInfo) -> Iterator[str]:
    """The description, then `# key = default`, or an example when the setting is unset by default."""
    default = field.get_default(call_default_factory=True) if not field.is_required() else UNSET
    text = [field.description or ""]
    choices = literal_choices(field.annotation)
    if choices and len(choices) > 1:
        text.append(f"One of: {', '.join(toml_value(choice) for choice in choices)}.")
    if default is UNSET:
        text.append("Required in this table.")
    elif default is None:
        text.append("Unset by default.")
    yield from comment(sentences(text))
    if default is not None and default is not UNSET:
        yield f"# {key} = {toml_value(default)}"
        for example in field.examples or []:
            yield f"#   e.g. {key} = {toml_value(example)}"
    elif field.examples:
        yield f"# {key} = {toml_value(field.examples[0])}"
    else:
        yield f"# {key} ="


def sentences(parts: list[str]) -> str:
    """Parts joined as sentences, each ended with a full stop when it lacks one."""
    parts = [part.strip() for part in parts if part.strip()]
    return " ".join(part if part.endswith((".", "!", "?", ")")) else f"{part}." for part in parts)


def comment(text: str) -> Iterator[str]:
    for line in textwrap.wrap(text, WIDTH - 2, break_long_words=False, break_on_hyphens=False):
        yield f"# {line}"


def toml_value(value: Any) -> str:
    """A default as TOML writes it (JSON's strings, numbers and arrays are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, SecretStr):
        return '"…"'
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, BaseModel):
        return toml_value(value.model_dump(mode="json", exclude_none=True))
    return json.dumps(str(value), ensure_ascii=False)


def without_none(annotation: Any) -> Any:
    """`X | None` is X: None is the unset value, which TOML writes by leaving the key out."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def table_kind(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """Whether a setting is a table of its own: a model, an array of them, or named entries of one."""
    annotation = without_none(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table", annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    item = args[-1] if args else None
    if isinstance(item, type) and issubclass(item, BaseModel):
        if origin is list:
            return "array", item
        if origin is dict:
            return "named", item
    return None


def literal_choices(annotation: Any) -> tuple[Any, ...]:
    annotation = without_none(annotation)
    return typing.get_args(annotation) if typing.get_origin(annotation) is typing.Literal else ()
