"""Ingestion throughput and search/read latency of the inbox, in process and over SMTP.

Run: .venv/bin/python bench/inbox.py [--messages N] [--repeats R] [--queries Q]

Each repeat builds a fresh inbox in a temporary folder and:
- ingests N synthetic messages (plain, HTML-only, with a 40 KB attachment, forwarded) through
  `InboxService.ingest` with the local extractive summary: messages per second;
- sends 200 more over one SMTP connection (smtplib into the aiosmtpd receiver on 127.0.0.1):
  messages per second;
- runs Q keyword searches, Q sender searches and Q paged reads of a 60 KB body through the tool
  handlers: p50 and p95 in milliseconds.
The figures printed are the medians over the repeats. The first line is the import time of the
namespace module, beyond pydantic and the contract (median of 5 fresh interpreters).
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
# Scripts here are named after namespaces (bench/calendar.py): keep them from shadowing the stdlib.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH_DIR]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import random  # noqa: E402
import smtplib  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from email.message import EmailMessage  # noqa: E402
from email.policy import SMTP as SMTP_POLICY  # noqa: E402

import anyio  # noqa: E402

from bench.measure import percentile  # noqa: E402
from mcp_tools.core.tooling import CallContext, Environment  # noqa: E402
from mcp_tools.servers.inbox import NAMESPACE, tools  # noqa: E402
from mcp_tools.servers.inbox.config import InboxConfig  # noqa: E402
from mcp_tools.servers.inbox.service import InboxService  # noqa: E402
from tests.processes import free_port  # noqa: E402

ADDRESS = "inbox@bench.example"
WORD_TEXT = """invoice meeting lease renewal report quarterly budget travel flight hotel booking refund order
shipping parcel contract signature deadline review draft proposal schedule dentist school insurance tax
receipt payment reminder subscription newsletter conference agenda minutes"""
WORDS = WORD_TEXT.split()
SENDERS = [f"{name}@{domain}" for name in ("ann", "bob", "cho", "dev", "eli") for domain in ("a.example", "b.example")]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def message(rng: random.Random, number: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = rng.choice(SENDERS)
    msg["To"] = ADDRESS
    msg["Subject"] = sentence(rng, 4)
    msg["Date"] = f"{1 + number % 28:02d} Oct 2026 {number % 24:02d}:00:00 +0000"
    msg["Message-ID"] = f"<bench-{number}@bench.example>"
    body = "\n\n".join(" ".join(sentence(rng, 12) for _ in range(4)) for _ in range(6))
    kind = number % 4
    if kind == 1:
        msg.set_content(f"<html><body><p>{body.replace(chr(10), '<br>')}</p></body></html>", subtype="html")
    else:
        msg.set_content(body)
    if kind == 2:
        msg.add_attachment(rng.randbytes(40_000), maintype="application", subtype="pdf", filename="scan.pdf")
    if kind == 3:
        inner = EmailMessage()
        inner["From"] = rng.choice(SENDERS)
        inner["Subject"] = sentence(rng, 3)
        inner.set_content(body)
        msg.add_attachment(inner)
    return msg.as_bytes(policy=SMTP_POLICY)


def smtp_rate(service: InboxService, raws: list[bytes]) -> float:
    from aiosmtpd.controller import Controller

    from mcp_tools.servers.inbox.smtp import InboxSMTPHandler, greeting_hostname, smtp_parameters

    port = free_port()
    controller = Controller(
        InboxSMTPHandler(service),
        hostname="127.0.0.1",
        port=port,
        server_hostname=greeting_hostname(service),
        **smtp_parameters(service),
    )
    controller.start()
    try:
        client = smtplib.SMTP("127.0.0.1", port, timeout=30)
        started = time.perf_counter()
        for raw in raws:
            client.sendmail("bench@sender.example", [ADDRESS], raw)
        elapsed = time.perf_counter() - started
        client.quit()
    finally:
        controller.stop()
    return len(raws) / elapsed


async def timed(samples: list[float], call) -> object:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = await call
    samples.append((time.perf_counter() - started) * 1000)
    return result


async def one_repeat(count: int, queries: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        env = Environment(data_dir=base / "data", state_dir=base / "state")
        service: InboxService = NAMESPACE.create(InboxConfig(addresses=[ADDRESS]), env)
        raws = [message(rng, number) for number in range(count)]
        started = time.perf_counter()
        for raw in raws:
            await service.ingest(raw, via="bench")
        figures["ingest msg/s"] = count / (time.perf_counter() - started)
        extra = [message(rng, count + number) for number in range(200)]
        figures["smtp msg/s"] = await anyio.to_thread.run_sync(smtp_rate, service, extra)

        long_body = "\n\n".join(sentence(rng, 15) for _ in range(600))
        long_raw = EmailMessage()
        long_raw["Subject"], long_raw["Message-ID"] = "long one", "<long-body@bench.example>"
        long_raw.set_content(long_body)
        long_id = (await service.ingest(long_raw.as_bytes(), via="bench")).id

        ctx = CallContext()
        keyword, by_sender, reads = [], [], []
        for _ in range(queries):
            query = " ".join(rng.sample(WORDS, 2))
            await timed(keyword, tools.search(service, tools.SearchArgs(query=query, limit=10), ctx))
            sender = rng.choice(SENDERS).split("@")[0]
            await timed(by_sender, tools.search(service, tools.SearchArgs(sender=sender, limit=10), ctx))
            offset = rng.randrange(0, len(long_body) - 8000)
            await timed(reads, tools.read(service, tools.ReadArgs(id=long_id, offset=offset), ctx))
        for name, samples in (("search keywords", keyword), ("search sender", by_sender), ("read 8k chunk", reads)):
            figures[f"{name} p50 ms"] = statistics.median(samples)
            figures[f"{name} p95 ms"] = percentile(samples, 0.95)
    return figures


def import_time_ms() -> float:
    code = (
        "import time, pydantic, mcp_tools.core.tooling; t = time.perf_counter(); "
        "import mcp_tools.servers.inbox; print((time.perf_counter() - t) * 1000)"
    )
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout)
        for _ in range(5)
    ]
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print(f"import mcp_tools.servers.inbox: {import_time_ms():.1f} ms (median of 5)")
    runs = [anyio.run(one_repeat, args.messages, args.queries, seed) for seed in range(args.repeats)]
    print(f"{args.messages} messages + 200 over SMTP, {args.queries} queries each, median of {args.repeats} repeats:")
    for key in runs[0]:
        print(f"  {key:24s} {statistics.median(run[key] for run in runs):10.2f}")


if __name__ == "__main__":
    main()
