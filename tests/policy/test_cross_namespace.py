"""A namespace that writes into another's store does it through the gate, as the same caller.

The `fetcher` test namespace (tests/crossing_namespace.py) saves into the files store with
`ctx.call_tool("files.write", ...)`; these attacks try to make that write skip what a direct
`files.write` would meet: the confirmation of an overwrite, `read_only`, `disabled`, the audit
row, the principal an approval belongs to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_tools.composition.app import App, build_app
from mcp_tools.policy.gate import Answer, Caller, ConfirmationRequest
from mcp_tools.servers import CATALOG
from tests.harness import connect, failure, make_config, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def fetcher(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(CATALOG, "fetcher", "tests.crossing_namespace")
    return "fetcher"


def fetcher_app(tmp_path: Path, **policy: object) -> App:
    return build_app(make_config(tmp_path, {"server": {"servers": ["files", "fetcher"]}, "policy": dict(policy)}))


def stored(tmp_path: Path, path: str) -> Path:
    return tmp_path / "data" / "files" / path


def put(tmp_path: Path, path: str, text: str) -> None:
    stored(tmp_path, path).parent.mkdir(parents=True, exist_ok=True)
    stored(tmp_path, path).write_text(text)


class RecordingAsker:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.asked: list[ConfirmationRequest] = []

    async def ask(self, request: ConfirmationRequest) -> Answer:
        self.asked.append(request)
        return self.answer


async def call(app: App, name: str, arguments: dict, caller: Caller):
    return await app.gate.call(app.find_tool(name), name, arguments, caller)


async def test_attack_an_overwrite_through_another_tool_asks_exactly_like_files_write(tmp_path: Path, fetcher: str):
    app = fetcher_app(tmp_path)
    put(tmp_path, "report.txt", "the person's report")
    asker = RecordingAsker(Answer.DECLINE)
    caller = Caller(transport="http", principal="alice", asker=asker)

    declined = await call(app, "fetcher.fetch", {"text": "attacker text", "save_to": "report.txt"}, caller)

    assert declined.is_error and declined.error["kind"] == "declined_by_user"
    assert stored(tmp_path, "report.txt").read_text() == "the person's report"
    [request] = asker.asked
    assert request.tool == "files.write" and "Replace report.txt" in request.summary
    assert "fetcher.fetch" in request.summary  # the person sees which call wants it
    rows = app.store.tail(5)
    assert [(row.tool, row.principal, row.transport, row.decision) for row in rows] == [
        ("files.write", "alice", "http", "declined"),
        ("fetcher.fetch", "alice", "http", "ran"),
    ]
    assert rows[0].args["path"] == "report.txt"


async def test_a_new_file_is_written_and_audited_as_files_write_with_the_callers_principal(
    tmp_path: Path, fetcher: str
):
    app = fetcher_app(tmp_path)
    caller = Caller(transport="http", principal="alice", asker=RecordingAsker(Answer.DECLINE))

    outcome = await call(app, "fetcher.fetch", {"text": "fresh", "save_to": "new/one.txt"}, caller)

    assert not outcome.is_error and outcome.structured == {"text": "fresh", "saved": True}
    assert outcome.notice.startswith("Action performed: Create new/one.txt") and "files.write" in outcome.notice
    assert stored(tmp_path, "new/one.txt").read_text() == "fresh"
    write, fetch = app.store.tail(2)
    assert (write.tool, write.principal, write.decision, write.outcome) == ("files.write", "alice", "ran", "ok")
    assert (fetch.tool, fetch.principal) == ("fetcher.fetch", "alice")


@pytest.mark.parametrize("policy", [{"read_only": True}, {"disabled": ["files.write"]}, {"disabled": ["files.*"]}])
async def test_attack_a_policy_that_hides_files_write_refuses_the_save_option_before_anything_runs(
    tmp_path: Path, fetcher: str, policy: dict
):
    app = fetcher_app(tmp_path, **policy)
    caller = Caller(transport="http", principal="alice")

    refused = await call(app, "fetcher.fetch", {"text": "x", "save_to": "sneaky.txt"}, caller)
    plain = await call(app, "fetcher.fetch", {"text": "x"}, caller)

    assert refused.is_error and refused.error["kind"] == "denied_by_policy"
    assert "save_to" in refused.error["message"] and "files.write" in refused.error["message"]
    assert "without save_to" in refused.error["hint"]
    assert not stored(tmp_path, "sneaky.txt").exists()
    assert not plain.is_error  # the tool itself stays: it only reads
    assert [row.tool for row in app.store.tail(5)] == ["fetcher.fetch", "fetcher.fetch"]


async def test_read_only_leaves_the_save_option_out_of_the_listed_schema(tmp_path: Path, fetcher: str):
    async with connect(tmp_path, app=fetcher_app(tmp_path, read_only=True)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        refused = failure(await client.call_tool("fetcher_fetch", {"text": "x", "save_to": "a.txt"}))
    assert "files_write" not in listed
    assert "save_to" not in listed["fetcher_fetch"].input_schema["properties"]
    assert refused["kind"] == "denied_by_policy" and "save_to" in refused["message"]
    async with connect(tmp_path / "open", app=fetcher_app(tmp_path / "open")) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert "save_to" in listed["fetcher_fetch"].input_schema["properties"]


async def test_attack_an_approval_for_one_principals_overwrite_does_not_run_anothers(tmp_path: Path, fetcher: str):
    app = fetcher_app(tmp_path)
    put(tmp_path, "plan.txt", "v1")
    arguments = {"text": "v2", "save_to": "plan.txt"}
    alice, bob = Caller(transport="http", principal="alice"), Caller(transport="http", principal="bob")

    pending = await call(app, "fetcher.fetch", arguments, alice)
    assert pending.error["kind"] == "approval_required"
    assert "files.write" in pending.error["message"]
    assert "call fetcher_fetch again" in pending.error["hint"]  # the call the model made, not the inner one
    approval = app.store.get_approval(pending.error["approval_id"])
    assert (approval.tool, approval.principal) == ("files.write", "alice")
    app.store.decide_approval(approval.id, True, 600)

    stolen = await call(app, "fetcher.fetch", arguments, bob)
    assert stolen.error["kind"] == "approval_required" and stored(tmp_path, "plan.txt").read_text() == "v1"
    ran = await call(app, "fetcher.fetch", arguments, alice)
    assert not ran.is_error and stored(tmp_path, "plan.txt").read_text() == "v2"
    assert app.store.tail(2)[0].decision == "approved_out_of_band"


async def test_attack_a_handler_cannot_call_a_tool_it_did_not_declare(tmp_path: Path, fetcher: str):
    app = fetcher_app(tmp_path)
    put(tmp_path, "keep.txt", "keep")

    outcome = await call(app, "fetcher.sneak", {"path": "keep.txt"}, Caller(asker=RecordingAsker(Answer.ACCEPT)))

    assert outcome.is_error and outcome.error["kind"] == "denied_by_policy"
    assert "does not declare" in outcome.error["message"]
    assert stored(tmp_path, "keep.txt").read_text() == "keep"


async def test_the_save_option_without_the_files_namespace_says_what_is_off(tmp_path: Path, fetcher: str):
    app = build_app(make_config(tmp_path, {"server": {"servers": ["fetcher"]}}))
    outcome = await call(app, "fetcher.fetch", {"text": "x", "save_to": "a.txt"}, Caller())
    assert outcome.error["kind"] == "not_configured" and "save_to" in outcome.error["message"]
    assert app.find_tool("fetcher.fetch").withheld == ("save_to",)


async def test_attack_the_2026_round_trip_confirms_the_inner_overwrite(tmp_path: Path, fetcher: str):
    app = fetcher_app(tmp_path)
    put(tmp_path, "r.txt", "old")
    seen: list = []
    async with connect(tmp_path, app=app, mode="2026-07-28", elicit="decline", seen=seen) as client:
        declined = failure(await client.call_tool("fetcher_fetch", {"text": "new", "save_to": "r.txt"}))
    assert declined["kind"] == "declined_by_user" and stored(tmp_path, "r.txt").read_text() == "old"
    async with connect(tmp_path, app=app, mode="2026-07-28", elicit="accept", seen=seen) as client:
        done = ok(await client.call_tool("fetcher_fetch", {"text": "new", "save_to": "r.txt"}))
    assert done["saved"] and stored(tmp_path, "r.txt").read_text() == "new"
    assert len(seen) == 2 and all("files.write" in params.message for params in seen)


async def test_attack_a_tool_within_the_scopes_cannot_write_through_one_outside_them(tmp_path: Path, fetcher: str):
    app = fetcher_app(tmp_path)
    read_only_scopes = Caller(
        transport="http", principal="alice@https://id.example", reaches=lambda spec: spec.read_only
    )

    refused = await call(app, "fetcher.fetch", {"text": "attacker text", "save_to": "planted.txt"}, read_only_scopes)

    assert refused.is_error and refused.error["kind"] == "denied_by_policy"
    assert "scopes" in refused.error["message"]
    assert not stored(tmp_path, "planted.txt").exists()
    assert ok_fetch(await call(app, "fetcher.fetch", {"text": "just read"}, read_only_scopes))
    assert app.store.tail(3)[0].tool == "files.write" and app.store.tail(3)[0].decision == "denied"


def ok_fetch(outcome) -> bool:
    return not outcome.is_error and outcome.structured == {"text": "just read", "saved": False}
