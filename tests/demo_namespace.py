"""A small namespace used to test the core without depending on any real service."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcp_tools.core.tooling import (
    Arguments,
    CallContext,
    Namespace,
    NotConfigured,
    Output,
    Risk,
    SearchHit,
    SearchHook,
    ToolFailure,
    ToolSpec,
)


class DemoConfig(BaseModel):
    enabled: bool = True
    greeting: str = "hello"
    search_delay: float = 0.0  # seconds its search hook takes; to test a slow source


async def find(service: DemoService, query: str, limit: int) -> list[SearchHit]:
    import anyio

    await anyio.sleep(service.search_delay)
    return [SearchHit(f"demo document about {query}", "from the demo namespace", query, 1.0)]


class DemoService:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting
        self.erased: list[str] = []
        self.notes: dict[str, str] = {}
        self.search_delay = 0.0
        self.gone: set[str] = set()  # targets that erase's precondition reports as missing


class EchoArgs(Arguments):
    text: str = Field(description="Text to echo back.")


class EchoOut(Output):
    echo: str


class NoteArgs(Arguments):
    key: str
    text: str
    api_token: str | None = None


class NoteOut(Output):
    key: str
    replaced: bool


class EraseArgs(Arguments):
    target: str


class EraseOut(Output):
    erased: str


class FailArgs(Arguments):
    kind: str = "not_found"


async def echo(service: DemoService, args: EchoArgs, ctx: CallContext) -> EchoOut:
    await ctx.report_progress(1, 1, "echoed")
    return EchoOut(echo=f"{service.greeting}: {args.text}")


async def note(service: DemoService, args: NoteArgs, ctx: CallContext) -> NoteOut:
    replaced = args.key in service.notes
    service.notes[args.key] = args.text
    return NoteOut(key=args.key, replaced=replaced)


async def note_risk(service: DemoService, args: NoteArgs) -> Risk:
    return Risk.HIGH if args.key in service.notes else Risk.MEDIUM


async def erase(service: DemoService, args: EraseArgs, ctx: CallContext) -> EraseOut:
    service.erased.append(args.target)
    return EraseOut(erased=args.target)


async def erase_precheck(service: DemoService, args: EraseArgs) -> None:
    if args.target.startswith("missing") or args.target in service.gone:
        raise ToolFailure("not_found", f"{args.target} does not exist", "erase something that exists")


async def fail(service: DemoService, args: FailArgs, ctx: CallContext) -> EchoOut:
    if args.kind == "crash":
        raise RuntimeError("secret-internal-detail")
    raise ToolFailure("not_found", "nothing here", "try another key")


def create(config: DemoConfig, env: object) -> DemoService:
    if not config.enabled:
        raise NotConfigured("set [demo] enabled = true")
    service = DemoService(config.greeting)
    service.search_delay = config.search_delay
    return service


NAMESPACE = Namespace(
    name="demo",
    description="Test namespace.",
    config_model=DemoConfig,
    create=create,
    search=SearchHook(find=find, read_tool="demo.echo", ref_argument="text"),
    tools=(
        ToolSpec(
            "demo.echo",
            "Echo text.",
            EchoArgs,
            EchoOut,
            echo,
            Risk.LOW,
            lambda a: f"Echo {a.text!r}",
            read_only=True,
        ),
        ToolSpec(
            "demo.note",
            "Store a note.",
            NoteArgs,
            NoteOut,
            note,
            Risk.MEDIUM,
            lambda a: f"Store note {a.key!r}",
            dynamic_risk=note_risk,
        ),
        ToolSpec(
            "demo.erase",
            "Erase a target.",
            EraseArgs,
            EraseOut,
            erase,
            Risk.HIGH,
            lambda a: f"Erase {a.target!r}",
            precheck=erase_precheck,
        ),
        ToolSpec("demo.fail", "Always fails.", FailArgs, EchoOut, fail, Risk.LOW, lambda a: "Fail", read_only=True),
    ),
)
