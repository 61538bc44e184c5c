"""Imports inside `mcp_tools` follow its layers (tests/layers.py): no cycles between modules, and
no module imports from a layer above its own. Imports inside functions and under TYPE_CHECKING
count too: deferring an import hides a dependency from start-up, not from the design."""

from __future__ import annotations

import pytest

from tests.layers import LAYER_NAMES, PACKAGE, Import, cycles, folders, import_graph, layer_of, modules

GRAPH = import_graph()


def edges_within(group: list[str]) -> list[Import]:
    members = set(group)
    return [edge for module in group for edge in GRAPH[module] if edge.target in members]


def test_every_module_has_a_layer() -> None:
    """A new module is placed in tests/layers.py, so its imports are checked."""
    unplaced = [module for module in modules() if layer_of(module) is None]
    assert not unplaced, f"modules in no layer of tests/layers.py: {unplaced}"


def test_each_module_is_saved_in_the_folder_of_its_layer() -> None:
    """The package root holds only `__init__` and `__main__`; every other module sits in a folder the
    table places whole, so a new module gets its layer from where it is saved."""
    found = modules()
    at_root = [name for name, path in found.items() if path.parent == PACKAGE and path.stem != "__init__"]
    assert at_root == ["mcp_tools.__main__"], f"modules at the package root (put them in a layer's folder): {at_root}"
    saved_in = {name.split(".")[1] for name, path in found.items() if path.parent != PACKAGE}
    unnamed = sorted(saved_in - folders())
    assert not unnamed, f"folders of mcp_tools that no layer of tests/layers.py names: {unnamed}"


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    report = "\n\n".join(
        "cycle between " + ", ".join(group) + ":\n" + "\n".join(f"  {edge}" for edge in edges_within(group))
        for group in found
    )
    assert not found, f"{len(found)} import cycle(s):\n{report}"


def test_no_module_imports_from_a_layer_above() -> None:
    upward = [
        edge
        for found in GRAPH.values()
        for edge in found
        if (source := layer_of(edge.source)) is not None
        and (target := layer_of(edge.target)) is not None
        and target < source
    ]
    report = "\n".join(
        f"  {edge}: {LAYER_NAMES[layer_of(edge.source) or 0]} imports {LAYER_NAMES[layer_of(edge.target) or 0]}"
        for edge in upward
    )
    assert not upward, f"{len(upward)} import(s) from a layer above:\n{report}"


# --- the checks themselves -------------------------------------------------------------------


def test_the_graph_holds_module_function_and_type_checking_imports() -> None:
    kinds = {(edge.source, edge.target): edge.kind for found in GRAPH.values() for edge in found}
    assert kinds[("mcp_tools.__main__", "mcp_tools.cli.main")] == "module"  # `from mcp_tools.cli import main`
    assert "function" in kinds.values()
    assert "type" in kinds.values()
    # `from mcp_tools.policy import gate` and `from mcp_tools.policy.gate import X` both lead to the module
    assert any(target == "mcp_tools.policy.gate" for _, target in kinds)


def test_cycles_are_found() -> None:
    def edge(source: str, target: str) -> Import:
        return Import(source, target, 1, "module")

    graph = {
        "a": [edge("a", "b")],
        "b": [edge("b", "c")],
        "c": [edge("c", "a"), edge("c", "d")],
        "d": [],
        "e": [edge("e", "f")],
        "f": [edge("f", "e")],
    }
    assert cycles(graph) == [["a", "b", "c"], ["e", "f"]]


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("mcp_tools.cli", "entry points"),
        ("mcp_tools.textcalls.runner", "faces"),
        ("mcp_tools.composition.app", "composition"),
        ("mcp_tools.transports.http", "faces"),
        ("mcp_tools.inventory.catalog", "inventory"),
        ("mcp_tools.policy.gate", "policy"),
        ("mcp_tools.approvals.telegram", "channels"),
        ("mcp_tools.servers.files.tools", "namespaces"),
        ("mcp_tools.servers", "foundation"),
        ("mcp_tools.core.tooling", "foundation"),
        ("mcp_tools.util.text", "foundation"),
    ],
)
def test_the_most_specific_pattern_places_a_module(module: str, layer: str) -> None:
    index = layer_of(module)
    assert index is not None and LAYER_NAMES[index] == layer
