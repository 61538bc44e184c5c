"""How a call travels through mcp_tools: the hops between its modules, for three flows.

1. mcp: one `tools/call` of `files.list` through the server `build_server` makes, from the SDK's
   real client in memory.
2. text: one text call (`files.list` in a reply's prose) through `run_reply`, the gateway
   `POST /text-calls` and `mcp-tools call-text` use.
3. page: a waiting high-risk call (`files.delete` from a client that cannot ask) approved on the
   approvals page: from the page's POST through to the call's result.

`sys.setprofile` records every Python frame that starts or resumes while the flow runs; frames
of mcp_tools modules make the flow's path, one entry a module change. Reported per flow:

- calls: frames of mcp_tools code started or resumed;
- modules: distinct mcp_tools modules on the path;
- hops: changes of module along the path;
- climbs: calls from a module into one of a higher layer (tests/layers.py, the table the import
  layering test checks), each caller the nearest mcp_tools frame below the called one;
- returns: entries into a module the path had already left for another.

Each flow runs once untimed first, so lazy imports and caches do not count. The figures are
counts, not times: they change only when the code path does.

    python bench/call_flow.py [--path]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx  # noqa: E402
from mcp import Client  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from mcp_tools.composition.app import App, build_app  # noqa: E402
from mcp_tools.core.config import parse_config  # noqa: E402
from mcp_tools.policy.gate import Caller  # noqa: E402
from mcp_tools.transports.http import page_security  # noqa: E402
from mcp_tools.transports.mcp_server import build_server  # noqa: E402
from tests.layers import layer_of  # noqa: E402

PAGE = "http://127.0.0.1:8766"


@dataclass
class Trace:
    path: list[str] = field(default_factory=list)  # mcp_tools modules, one entry a module change
    calls: int = 0
    climbs: list[tuple[str, str]] = field(default_factory=list)

    def record(self, frame: FrameType, event: str, _: Any) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("mcp_tools"):
            return
        self.calls += 1
        if not self.path or self.path[-1] != module:
            self.path.append(module)
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith("mcp_tools"):
            caller = caller.f_back
        if caller is not None:
            source = caller.f_globals["__name__"]
            above, below = layer_of(module), layer_of(source)
            if above is not None and below is not None and above < below:
                self.climbs.append((source, module))

    @property
    def returns(self) -> int:
        left: set[str] = set()
        count = 0
        for previous, module in zip(self.path, self.path[1:], strict=False):
            left.add(previous)
            count += module in left
        return count


async def traced(step: Callable[[], Awaitable[Any]]) -> Trace:
    trace = Trace()
    sys.setprofile(trace.record)
    try:
        await step()
    finally:
        sys.setprofile(None)
    return trace


def config(tmp: Path, page: bool = False) -> Any:
    (tmp / "files").mkdir(exist_ok=True)
    (tmp / "files" / "a.txt").write_text("a\n")
    settings: dict[str, Any] = {
        "server": {"tools": ["files"], "state_dir": str(tmp / "state"), "data_dir": str(tmp)},
        "files": {"root": str(tmp / "files")},
    }
    if page:
        settings["approvals"] = {"page": {"enabled": True, "url": f"{PAGE}/approvals"}, "wait_seconds": 60}
    return parse_config(settings, {})


async def mcp_flow(app: App) -> Trace:
    async with Client(build_server(app, transport="test"), mode="legacy") as client:
        name = next(
            tool.name for tool in (await client.list_tools()).tools if tool.name in {"files.list", "files_list"}
        )
        await client.call_tool(name, {"path": ""})
        return await traced(lambda: client.call_tool(name, {"path": ""}))


async def text_flow(app: App) -> Trace:
    reply = 'Looking: {"name": "files.list", "arguments": {"path": ""}}'
    from mcp_tools.textcalls import run_reply

    caller = Caller(transport="text")
    await run_reply(app, reply, caller)
    return await traced(lambda: run_reply(app, reply, caller))


async def page_flow(app: App, files: Path, round: int) -> Trace:
    """A call that waits for the page, then the page's yes, traced from the POST to the result."""
    from mcp_tools.approvals import serve_page_here
    from mcp_tools.approvals.page import new_login_link

    page = serve_page_here(
        app.config.approvals.page, app.store, app.out_of_band, page_security("127.0.0.1", []), f"{PAGE}/approvals"
    )
    assert page is not None
    site = Starlette(routes=[Mount("/approvals", app=page)])
    target = f"gone-{round}.txt"
    (files / target).write_text("x\n")
    finished = anyio.Event()
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=site), base_url=PAGE) as browser,
        Client(build_server(app, transport="test"), mode="legacy") as client,
        anyio.create_task_group() as tasks,
    ):
        await browser.get(new_login_link(app.store, f"{PAGE}/approvals", 600).removeprefix(PAGE))
        csrf = (await browser.get("/approvals/")).text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        name = next(
            tool.name for tool in (await client.list_tools()).tools if tool.name in {"files.delete", "files_delete"}
        )

        async def call() -> None:
            result = await client.call_tool(name, {"path": target})
            assert not result.is_error, result.content
            finished.set()

        tasks.start_soon(call)
        while not (pending := app.store.list_approvals(include_done=False)):
            await app.out_of_band.decisions.wait_for_change(1)

        async def approve() -> None:
            answer = await browser.post(
                f"/approvals/a/{pending[0].id}/approve", data={"csrf": csrf}, headers={"Origin": PAGE}
            )
            assert answer.status_code < 400, answer.text
            await finished.wait()

        trace = await traced(approve)
    return trace


async def measure() -> dict[str, Trace]:
    with tempfile.TemporaryDirectory() as tmp:
        app = build_app(config(Path(tmp)))
        async with app.running():
            traces = {"mcp tools/call files.list": await mcp_flow(app), "text call files.list": await text_flow(app)}
    with tempfile.TemporaryDirectory() as tmp:
        app = build_app(config(Path(tmp), page=True))
        async with app.running():
            await page_flow(app, Path(tmp, "files"), 0)
            traces["page approves files.delete"] = await page_flow(app, Path(tmp, "files"), 1)
    return traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", action="store_true", help="print each flow's path of modules too")
    args = parser.parse_args()
    traces = anyio.run(measure)
    print(f"{'flow':<30} {'calls':>6} {'modules':>8} {'hops':>6} {'climbs':>7} {'returns':>8}")
    for flow, trace in traces.items():
        hops = len(trace.path) - 1
        modules = len(set(trace.path))
        print(f"{flow:<30} {trace.calls:>6} {modules:>8} {hops:>6} {len(trace.climbs):>7} {trace.returns:>8}")
    for flow, trace in traces.items():
        climbs = sorted({f"{source} -> {target}" for source, target in trace.climbs})
        print(f"\n{flow}: climbs {', '.join(climbs) or 'none'}")
        if args.path:
            print("  " + " > ".join(module.removeprefix("mcp_tools.") for module in trace.path))


if __name__ == "__main__":
    main()
