"""What the tool list costs in a model's context, with every namespace on and by default.

Counts the compact JSON of each definition `tools/list` would carry, built from the specs and
the shipped policy (no accounts or services needed), in characters and estimated tokens
(characters / 4): the model-visible part (name, description, input schema) and the full
definition (with title, output schema and annotations).

    .venv/bin/python bench/context.py                      # per namespace and total, all on and default
    .venv/bin/python bench/context.py --tools              # and per tool
    .venv/bin/python bench/context.py --save before.json   # keep the figures
    .venv/bin/python bench/context.py --against 007e086    # before/after against a git revision
    .venv/bin/python bench/context.py --against before.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("mcp_tools") is None:  # run by a Python the package is not installed in
    sys.path.append(str(ROOT))  # last: a revision measured through PYTHONPATH still comes first

from revision import exported  # noqa: E402  (bench/revision.py, beside this script)


def load_budget() -> Any:
    """This checkout's budget module, loaded by path so it can measure another checkout's package."""
    spec = importlib.util.spec_from_file_location("_mcp_tools_budget", ROOT / "mcp_tools" / "transports" / "budget.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measure() -> dict[str, Any]:
    budget = load_budget()
    try:
        tools = budget.every_tool()
    except ModuleNotFoundError as exc:
        sys.exit(
            f"bench/context.py: {exc.name} is not installed for {sys.executable}; run it with the project's "
            "environment: .venv/bin/python bench/context.py"
        )
    return {
        "all": budget.as_json(budget.costs_of(tools)),
        "default": budget.as_json(budget.costs_of(budget.default_selection(tools))),
    }


def measure_revision(revision: str) -> dict[str, Any]:
    """Export `revision` to a temporary directory and measure its package with this budget module."""
    with exported(revision) as source:
        env = {**os.environ, "PYTHONPATH": str(source)}
        out = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--json"],
            check=True,
            capture_output=True,
            env=env,
            text=True,
        ).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", action="store_true", help="also print every tool")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--save", metavar="FILE", help="write the figures as JSON to FILE")
    parser.add_argument("--against", metavar="REV_OR_JSON", help="compare with a git revision or a saved JSON")
    options = parser.parse_args()
    figures = measure()
    if options.save:
        Path(options.save).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    if options.json:
        print(json.dumps(figures))
        return
    budget = load_budget()
    everything = budget.from_json(figures["all"])
    default = budget.from_json(figures["default"])
    if options.tools:
        print(budget.format_tools(everything))
        print()
    print(budget.format_summary(everything, "every namespace on (tokens ~ chars / 4):"))
    print()
    print(budget.format_summary(default, "default selection:"))
    if options.against:
        source = Path(options.against)
        before = (
            json.loads(source.read_text(encoding="utf-8")) if source.is_file() else measure_revision(options.against)
        )
        for key, label in (("all", "every namespace on"), ("default", "default selection")):
            print()
            print(
                budget.format_comparison(
                    budget.from_json(before[key]),
                    budget.from_json(figures[key]),
                    f"{label}: {options.against} -> this checkout",
                )
            )


if __name__ == "__main__":
    main()
