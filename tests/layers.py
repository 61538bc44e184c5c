"""The layers of `mcp_tools` and its import graph, read from the source with `ast`.

A module may import from its own layer or any layer below it, never from one above. The table
is the one place the layers are written down: tests/test_layering.py checks the imports against
it and bench/call_flow.py counts the calls that climb back up through it. CONTRIBUTING.md says
what each layer is for.

A pattern names every module inside a package (`mcp_tools.approvals.*`) or one module exactly
(`mcp_tools.approvals.telegram`); the most specific pattern wins, so `mcp_tools.approvals.telegram`
can sit below the rest of `mcp_tools.approvals`. Every module but the package's own two lives in a
folder (tests/test_layering.py checks it), so a new module takes its layer from where it is saved.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mcp_tools"


def package(name: str) -> tuple[str, str]:
    """A package and everything inside it."""
    return name, f"{name}.*"


# Top to bottom. Each layer is a folder of `mcp_tools/` or a few: a module belongs to the layer of
# the folder it is saved in. The exact names are the exceptions a folder alone cannot say.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry points", ("mcp_tools.__main__", *package("mcp_tools.cli"))),
    (
        "faces",  # what people and clients talk to
        (
            *package("mcp_tools.transports"),  # the MCP server, Streamable HTTP and its limits, stdio
            *package("mcp_tools.textcalls"),  # the text-call gateway
            *package("mcp_tools.approvals"),  # the approvals page and the card
            *package("mcp_tools.tasks"),  # MCP tasks: the methods of both protocol versions and their runner
            *package("mcp_tools.oauth"),
            *package("mcp_tools.resources"),  # resources, icons, URL elicitation: MCP terms beside mcp_server
        ),
    ),
    ("composition", package("mcp_tools.composition")),  # builds the app; the template reads namespace configs
    # the out-of-band approval channels composition builds (the approvals page is a face)
    ("channels", ("mcp_tools.approvals.telegram", "mcp_tools.approvals.hook")),
    ("inventory", package("mcp_tools.inventory")),  # the catalog and the dynamic view
    # the inventory's chain of filters sits with the policy: the gate asks it who may call a tool
    ("policy", (*package("mcp_tools.policy"), "mcp_tools.inventory.chain")),
    ("namespaces", ("mcp_tools.servers.*",)),
    ("state", package("mcp_tools.state")),
    (
        "foundation",
        (
            "mcp_tools",  # the package itself: its version
            "mcp_tools.servers",  # the registry of namespace names; loads a namespace by name at run time
            *package("mcp_tools.core"),  # the tool model, the config, the selection grammar
            *package("mcp_tools.util"),  # the small utilities at the bottom
            "mcp_tools.oauth.settings",  # the [http.oauth] config model
            "mcp_tools.inventory.grammar",  # the one entry grammar of [server] tools and [http.oauth] scopes
        ),
    ),
)
LAYER_NAMES = tuple(name for name, _ in LAYERS)


def _specificity(pattern: str, module: str) -> int | None:
    """How closely `pattern` names `module` (higher is closer), or None if it does not."""
    if pattern == module:
        return 2 * len(pattern) + 1
    if pattern.endswith(".*") and module.startswith(pattern[:-1]):
        return 2 * len(pattern)
    return None


def layer_of(module: str) -> int | None:
    """The index in LAYERS (0 is the top) of the layer `module` belongs to, or None."""
    best: tuple[int, int] | None = None
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            score = _specificity(pattern, module)
            if score is not None and (best is None or score > best[0]):
                best = (score, index)
    return None if best is None else best[1]


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    kind: str  # "module", "function" (inside a def) or "type" (under `if TYPE_CHECKING:`)
    file: str = ""  # the source's path from the root

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self.file}:{self.line}, {self.kind}-level)"


def folders() -> set[str]:
    """The folders of `mcp_tools` that the table places whole (`mcp_tools.policy.*` names `policy`)."""
    return {
        pattern.split(".")[1]
        for _, patterns in LAYERS
        for pattern in patterns
        if pattern.endswith(".*") and pattern.count(".") == 2
    }


def modules() -> dict[str, Path]:
    """Every module of the checkout's `mcp_tools`, by dotted name."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _function_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _known(name: str, known: dict[str, Path]) -> str:
    """`name` if it is a module, else the nearest package holding it (`x.y.Class` -> `x.y`)."""
    while name not in known:
        name = name.rpartition(".")[0]
    return name


def imports_of(module: str, known: dict[str, Path]) -> Iterator[Import]:
    """Every import of an `mcp_tools` module in `module`: at module level, inside functions and
    under TYPE_CHECKING. `from package import name` counts as importing the submodule `name`
    when there is one."""
    path = known[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package_name = module if path.name == "__init__.py" else module.rpartition(".")[0]
    typing_only, in_functions = _type_checking_lines(tree), _function_lines(tree)
    file = path.relative_to(ROOT).as_posix()
    seen: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_name.split(".")[: len(package_name.split(".")) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" for alias in node.names]
        else:
            continue
        kind = "type" if node.lineno in typing_only else "function" if node.lineno in in_functions else "module"
        for target in targets:
            if target == "mcp_tools" or target.startswith("mcp_tools."):
                resolved = _known(target, known)
                if resolved != module and (node.lineno, resolved) not in seen:
                    seen.add((node.lineno, resolved))
                    yield Import(module, resolved, node.lineno, kind, file)


def import_graph() -> dict[str, list[Import]]:
    """Each module's imports of other `mcp_tools` modules."""
    known = modules()
    return {module: list(imports_of(module, known)) for module in known}


def cycles(graph: dict[str, list[Import]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    edges = {module: sorted({edge.target for edge in found}) for module, found in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in edges.get(module, []):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(groups)
