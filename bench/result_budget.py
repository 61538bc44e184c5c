"""Each tool's largest result against the result budget, on large generated data.

Every tool is called with the largest arguments its schema takes (limit, max_chars at their
maximum) on data far bigger than one page: a 6 MB log and a 2 MB binary in the files store, a
vault of 600 notes linking to one, a 300 KB note, 100 tasks with 8 KB notes, a 200-message Gmail
thread, a 2 MB PDF in Drive and in Gmail, a Tavily answering with megabytes, 180 search hits
with long paths, a command printing megabytes of control bytes. It reports the tokens (characters / 4, text blocks and
structured content together) of each result against `[server] max_result_tokens` (20,000 by
default), and whether the tool paged by itself or needed the gate to cut.

Run: .venv/bin/python bench/result_budget.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.budgets import DEFAULT_TOKENS, result_tokens, text  # noqa: E402
from tests.harness import connect  # noqa: E402
from tests.servers.drive.fixtures import drive_settings  # noqa: E402
from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle, FakeTasks  # noqa: E402
from tests.servers.fake_tavily import VALID_KEY, FakeTavily  # noqa: E402
from tests.servers.files.fixtures import local_backend  # noqa: E402
from tests.servers.gmail.fixtures import plain, sign_in  # noqa: E402
from tests.servers.inbox import fixtures as mail  # noqa: E402
from tests.servers.notes.fixtures import notes_settings, wait_indexed  # noqa: E402
from tests.servers.notes.test_notes_budget import big_vault  # noqa: E402
from tests.servers.search.test_search_budget import LONG_FOLDER  # noqa: E402
from tests.servers.tasks.fixtures import tasks_settings  # noqa: E402
from tests.servers.terminal.test_terminal import unisolated  # noqa: E402
from tests.servers.web.test_web_budget import HUGE, LARGEST, huge_result  # noqa: E402

rows: list[tuple[str, str, int, bool]] = []


async def measure(client: Any, label: str, tool: str, arguments: dict[str, Any]) -> None:
    result = await client.call_tool(tool, arguments)
    cut = "-token result budget" in text(result)
    rows.append((tool, label, result_tokens(result), cut or bool(result.is_error)))


async def files(base: Path) -> None:
    backend = local_backend(base)
    log = "".join(f"2026-01-01T00:00:{i % 60:02d} INFO request {i} served in {i % 97} ms\n" for i in range(120_000))
    backend.put("big.log", log.encode())
    backend.put("blob.bin", os.urandom(2 * 1024 * 1024))
    for i in range(1_000):
        backend.put(f"tree/{i // 100}/a file with a rather long name number {i:04}.txt", b"x")
    settings = backend.with_files(max_read_bytes=64 * 1024 * 1024, max_write_bytes=64 * 1024 * 1024)
    async with connect(base, settings) as client:
        await measure(client, "6 MB log, no max_chars", "files_read", {"path": "big.log"})
        await measure(client, "6 MB log, max_chars 30000", "files_read", {"path": "big.log", "max_chars": 30_000})
        await measure(client, "2 MB binary", "files_read", {"path": "blob.bin", "max_chars": 30_000})
        await measure(client, "1,000 files, recursive", "files_list", {"path": "tree", "recursive": True, "limit": 200})
        edit = {"old_string": "INFO", "new_string": "DEBUG", "replace_all": True}
        await measure(
            client, "replace_all on the log", "files_edit", {"path": "big.log", "edits": [edit], "dry_run": True}
        )


async def notes(base: Path) -> None:
    vault = big_vault(base / "vault")
    async with connect(base, notes_settings(vault, daily_folder="Daily")) as client:
        await wait_indexed(client)
        await measure(client, "300 KB note", "notes_read", {"path": "Long", "max_chars": 30_000})
        await measure(client, "300 KB daily note", "notes_daily", {"date": "2026-01-05", "max_chars": 30_000})
        await measure(client, "top_k 50", "notes_search", {"query": "filler text", "top_k": 50})
        await measure(client, "600 backlinks, limit 100", "notes_backlinks", {"path": "Target", "limit": 100})
        await measure(client, "800 links, limit 100", "notes_forward_links", {"path": "Hub", "limit": 100})
        await measure(client, "600 tagged, limit 100", "notes_search_by_tag", {"tag": "big", "limit": 100})
        rename = {"path": "Target", "new_path": "Moved/Renamed", "dry_run": True}
        await measure(client, "dry_run, 600 linking notes", "notes_rename", rename)
        await measure(client, "600 linking notes", "notes_delete", {"path": "Target"})


async def google_namespaces(base: Path) -> None:
    google = FakeGoogle().start()
    (base / "g").mkdir()
    (base / "t").mkdir()
    try:
        drive, gmail, tasks = FakeDrive(google), FakeGmail(google), FakeTasks(google)
        pdf = b"%PDF-1.7\n" + os.urandom(2 * 1024 * 1024)
        item = drive.add("report.pdf", pdf, "application/pdf")
        settings = drive_settings(base, google, drive={"max_read_bytes": 4 * 1024 * 1024})
        async with connect(base, settings) as client:
            await measure(client, "2 MB PDF", "drive_read", {"id": item.id, "max_chars": 30_000})
        first = gmail.add(plain(subject="Plan 0", body="Opening words. " * 60, message_id="<p0@x>"))
        for i in range(1, 200):
            raw = plain(subject=f"Re: Plan {i}", body="More thoughts. " * 60, message_id=f"<p{i}@x>")
            gmail.add(raw, thread_id=first.thread_id)
        notes = ("Step by step, what to do and why. " * 300)[:8192]
        for i in range(100):
            tasks.add(f"Task {i}", notes=notes)
        async with connect(base / "g", sign_in(base / "g", google)) as client:
            thread = {"id": first.thread_id, "thread": True, "max_chars": 30_000}
            await measure(client, "200-message thread", "gmail_read", thread)
            await measure(client, "its last page", "gmail_read", {**thread, "offset": 180_000})
        async with connect(base / "t", tasks_settings(base / "t", google)) as client:
            listing = {"list": "@default", "status": "all", "limit": 100}
            await measure(client, "100 tasks, 8 KB notes", "tasks_list", listing)
    finally:
        google.stop()


async def web(base: Path) -> None:
    with FakeTavily() as fake:
        fake.answer = HUGE
        fake.results = [huge_result(number) for number in range(20)]
        settings = {"server": {"namespaces": ["web"]}, "web": {"api_key": VALID_KEY, "api_base_url": fake.url}}
        async with connect(base, settings, elicit=None) as client:
            await measure(client, "1 MB answer and snippets", "web_search", LARGEST)


async def search_everything(base: Path) -> None:
    from mcp_tools.composition.app import build_app
    from tests.harness import make_config

    paragraph = "The glacier radar survey measured the ice tongue once more. " * 200
    settings = {
        "server": {"namespaces": ["notes", "files", "inbox", "search"]},
        "notes": {"vault": str(base / "vault"), "watch": False},
        "inbox": {"addresses": [mail.INBOX_ADDRESS]},
        "search": {"timeout_seconds": 60},
    }
    (base / "vault" / "Surveys").mkdir(parents=True)
    folder = base / "data" / "files" / LONG_FOLDER
    folder.mkdir(parents=True)
    app = build_app(make_config(base, settings))
    for i in range(60):
        (base / "vault" / "Surveys" / f"Glacier survey {i}.md").write_text(f"# Glacier survey {i}\n\n{paragraph}\n")
        (folder / f"glacier survey report {i} {'z' * 150}.txt").write_text(paragraph)
        subject = f"Glacier survey {i} " + "with a very long subject line " * 20
        raw = mail.simple(subject=subject, body=paragraph, message_id=f"<glacier-{i}@example.org>")
        await app.services["inbox"].ingest(raw, via="test")
    await anyio.to_thread.run_sync(app.services["notes"].reconcile)
    async with connect(base, app=app, elicit=None) as client:
        await measure(client, "180 hits, long paths, limit 50", "search_all", {"query": "glacier survey", "limit": 50})


async def terminal(base: Path) -> None:
    app = unisolated(base, output_chars=15_000, max_output_bytes=4 * 1024 * 1024)
    printer = "import sys; sys.stdout.write('\\x02' * 2000000); sys.stderr.write('\\x03\\n' * 1000000)"
    async with connect(base, app=app) as client:
        command = {"argv": ["python3", "-c", printer], "cwd": "work"}
        await measure(client, "4 MB of control bytes", "terminal_execute", command)


async def main() -> None:
    for part in (files, notes, google_namespaces, web, search_everything, terminal):
        with tempfile.TemporaryDirectory() as tmp:
            await part(Path(tmp))
    print(f"largest result per tool, tokens (characters / 4) against the {DEFAULT_TOKENS:,}-token budget")
    print(f"{'tool':22}{'data and arguments':32}{'tokens':>9}{'of budget':>11}  paged by")
    for tool, label, tokens, cut in rows:
        share = f"{tokens / DEFAULT_TOKENS:.0%}"
        print(f"{tool:22}{label:32}{tokens:9,}{share:>11}  {'the gate' if cut else 'the tool'}")
    over = [row for row in rows if row[2] > DEFAULT_TOKENS]
    print(f"over the budget: {len(over)} of {len(rows)}")


if __name__ == "__main__":
    anyio.run(main)
