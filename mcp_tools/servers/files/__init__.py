"""The files namespace: a sandboxed file store (a local folder or an S3 bucket) with exact edits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_tools.core.tooling import (
    Environment,
    Namespace,
    NotConfigured,
    SearchHit,
    SearchHook,
    install_hint,
    missing_modules,
)
from mcp_tools.servers.files.config import FilesConfig
from mcp_tools.servers.files.resources import RESOURCES
from mcp_tools.servers.files.service import FilesService
from mcp_tools.servers.files.tools import READ, TOOLS
from mcp_tools.util.sandbox import protected_in

S3_KEY_ID_ENV = "MCP_TOOLS_S3_ACCESS_KEY_ID"
S3_SECRET_ENV = "MCP_TOOLS_S3_SECRET_ACCESS_KEY"


def create(config: FilesConfig | None, env: Environment) -> FilesService:
    """Cheap: a local root is created and resolved; an S3 client is built on first use."""
    config = config or FilesConfig()
    if config.backend == "s3":
        from mcp_tools.servers.files.s3 import S3Backend, S3Settings

        if missing_modules(("boto3",)):
            raise NotConfigured(install_hint("s3", "boto3") + ' (for [files] backend = "s3")')
        if not config.bucket:
            raise NotConfigured('set [files] bucket = "..." (and endpoint_url for R2 or MinIO) for backend = "s3"')
        key_id = config.access_key_id or env.env.get(S3_KEY_ID_ENV) or env.env.get("AWS_ACCESS_KEY_ID")
        secret = (
            config.secret_access_key.get_secret_value()
            if config.secret_access_key
            else env.env.get(S3_SECRET_ENV) or env.env.get("AWS_SECRET_ACCESS_KEY")
        )
        if bool(key_id) != bool(secret):
            raise NotConfigured(
                f"set both [files] access_key_id and secret_access_key (or {S3_KEY_ID_ENV} and {S3_SECRET_ENV})"
            )
        settings = S3Settings(
            bucket=config.bucket,
            prefix=config.prefix,
            endpoint_url=config.endpoint_url,
            region=config.region or env.env.get("AWS_REGION") or env.env.get("AWS_DEFAULT_REGION"),
            access_key_id=key_id,
            secret_access_key=secret,
            session_token=env.env.get("AWS_SESSION_TOKEN") if key_id == env.env.get("AWS_ACCESS_KEY_ID") else None,
        )
        return FilesService(S3Backend(settings, names=config.names), config)
    from mcp_tools.servers.files.local import LocalBackend

    root = (config.root or env.data_dir / "files").expanduser()
    home = Path(env.env["HOME"]) if env.env.get("HOME", "").startswith("/") else None
    protected = protected_in(root, env.state_dir, env.data_dir, env.config_file, home, dict(env.env))
    if protected is not None:
        raise NotConfigured(
            f"[files] root {root} would expose {protected} (our config, state or data, or credentials), "
            "and a write there could change the policy itself: choose a folder of its own, e.g. "
            '"~/Documents/assistant", or leave root unset for the default'
        )
    return FilesService(LocalBackend(root, names=config.names), config)


async def find(service: FilesService, query: str, limit: int) -> list[SearchHit]:
    from mcp_tools.servers.files.search import find as scan

    return await scan(service, query, limit)


@asynccontextmanager
async def lifespan(service: FilesService) -> AsyncIterator[None]:
    """Sweeps temp files left by crashed writes, in the background (an S3 store leaves none)."""
    sweep = getattr(service.store, "sweep_temp_files", None)
    if sweep is None:
        yield
        return
    async with anyio.create_task_group() as group:
        group.start_soon(partial(anyio.to_thread.run_sync, sweep, abandon_on_cancel=True))
        try:
            yield
        finally:
            group.cancel_scope.cancel()


NAMESPACE: Namespace[FilesService] = Namespace(
    name="files",
    description="A sandboxed file store: list, read, write, edit, move and delete files under one root.",
    config_model=FilesConfig,
    create=create,
    tools=TOOLS,
    needs_account=False,
    search=SearchHook(find=find, read_tool=READ.name),
    resources=RESOURCES,
    lifespan=lifespan,
    instructions=(
        "Paths are relative to the store root; pass names exactly as files.list shows them. "
        "Read before you edit; pass the version you read as expected_sha256 "
        "so a newer change is never overwritten."
    ),
)
