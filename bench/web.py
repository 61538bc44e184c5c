"""Benchmark the web namespace against the local fake Tavily API (no network).

Run: .venv/bin/python bench/web.py [--rounds N]

Prints medians (and p90 where useful) of: the module's import cost, `create`, the first search
(lazy import of tavily-python and client set-up included), a steady search through the service,
the same request sent with bare httpx (the floor), rendering the text block, and a search through
a real MCP client with the policy layer in front.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_tools.core.tooling import CallContext, Environment  # noqa: E402
from mcp_tools.servers import web  # noqa: E402
from mcp_tools.servers.web import models as web_models  # noqa: E402
from mcp_tools.servers.web import tools as web_tools  # noqa: E402
from tests.servers.fake_tavily import VALID_KEY, FakeTavily  # noqa: E402


def median_ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"median {statistics.median(samples) * 1000:8.3f} ms   p90 {p90 * 1000:8.3f} ms   (n={len(samples)})"


def import_cost(rounds: int) -> tuple[list[float], list[float]]:
    """Wall time of a fresh interpreter importing the module, and of one importing only its base."""
    base = "import mcp_tools.core.tooling"
    full = "import mcp_tools.servers.web"
    timings: dict[str, list[float]] = {base: [], full: []}
    for _ in range(rounds):
        for statement in (base, full):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", statement], check=True, cwd=ROOT)
            timings[statement].append(time.perf_counter() - started)
    return timings[base], timings[full]


def first_search_cost(fake_url: str, rounds: int) -> list[float]:
    code = (
        "import asyncio, sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from pathlib import Path\n"
        "from mcp_tools.servers import web\n"
        "from mcp_tools.servers.web import models as web_models, tools as web_tools\n"
        "from mcp_tools.core.tooling import CallContext, Environment\n"
        f"config = web.WebConfig(api_base_url={fake_url!r})\n"
        f"svc = web.create(config, Environment(Path('.'), Path('.'), {{'TAVILY_API_KEY': {VALID_KEY!r}}}))\n"
        "async def main():\n"
        "    async with web.lifespan(svc):\n"
        "        started = time.perf_counter()\n"
        "        await web_tools.search(svc, web_models.SearchArgs(query='q'), CallContext())\n"
        "        print(time.perf_counter() - started)\n"
        "asyncio.run(main())\n"
    )
    samples = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        samples.append(float(out.stdout.strip()))
    return samples


async def steady_searches(service: web.WebService, rounds: int) -> list[float]:
    args = web_models.SearchArgs(query="python packaging", max_results=10)
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        await web_tools.search(service, args, CallContext())
        samples.append(time.perf_counter() - started)
    return samples


async def bare_httpx(fake_url: str, rounds: int) -> list[float]:
    import httpx

    body = {"query": "python packaging", "max_results": 10, "include_answer": "advanced"}
    headers = {"Authorization": f"Bearer {VALID_KEY}"}
    samples = []
    async with httpx.AsyncClient(base_url=fake_url, headers=headers) as client:
        for _ in range(rounds):
            started = time.perf_counter()
            response = await client.post("/search", json=body)
            response.json()
            samples.append(time.perf_counter() - started)
    return samples


def render_cost(rounds: int) -> list[float]:
    output = web_models.SearchOutput(
        query="q",
        answer="a" * 4000,
        results=[
            web_models.SearchResult(title=f"t{i}", url=f"https://e{i}.example/", content="word " * 400, score=0.5)
            for i in range(10)
        ],
    )
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        web_tools.render_search(output)
        samples.append(time.perf_counter() - started)
    return samples


async def mcp_searches(fake_url: str, rounds: int) -> list[float]:
    from tests.harness import connect

    settings = {"server": {"namespaces": ["web"]}, "web": {"api_key": VALID_KEY, "api_base_url": fake_url}}
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        async with connect(Path(tmp), settings, elicit=None) as client:
            for _ in range(rounds):
                started = time.perf_counter()
                result = await client.call_tool("web_search", {"query": "python packaging"})
                samples.append(time.perf_counter() - started)
                assert not result.is_error
    return samples


async def main(rounds: int) -> None:
    base, full = import_cost(max(11, rounds // 20))
    print(f"import mcp_tools.core.tooling (fresh process)     {median_ms(base)}")
    print(f"import mcp_tools.servers.web (fresh process) {median_ms(full)}")
    print(f"  -> web module's own import cost ~ {(statistics.median(full) - statistics.median(base)) * 1000:.1f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        env = Environment(Path(tmp), Path(tmp), {"TAVILY_API_KEY": VALID_KEY})
        config = web.WebConfig(api_base_url="http://127.0.0.1:1")
        samples = []
        for _ in range(rounds * 5):
            started = time.perf_counter()
            web.create(config, env)
            samples.append(time.perf_counter() - started)
        print(f"create()                                     {median_ms(samples)}")

    with FakeTavily() as fake:
        print(f"first search in a fresh process             {median_ms(first_search_cost(fake.url, 11))}")
        with tempfile.TemporaryDirectory() as tmp:
            env = Environment(Path(tmp), Path(tmp), {"TAVILY_API_KEY": VALID_KEY})
            service = web.create(web.WebConfig(api_base_url=fake.url), env)
            async with web.lifespan(service):
                await steady_searches(service, 5)
                print(f"search, 10 results, via the service        {median_ms(await steady_searches(service, rounds))}")
        print(f"same request with bare httpx (floor)        {median_ms(await bare_httpx(fake.url, rounds))}")
        print(f"search over MCP (policy + audit included)   {median_ms(await mcp_searches(fake.url, rounds))}")
    print(f"render text block, 10 x 2000-char snippets  {median_ms(render_cost(rounds * 5))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    asyncio.run(main(parser.parse_args().rounds))
