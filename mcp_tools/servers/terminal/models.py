"""The arguments and result of `terminal.execute`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from mcp_tools.core.tooling import Arguments, Output

Arg = Annotated[str, Field(max_length=16_384)]


class ExecuteArgs(Arguments):
    argv: list[Arg] = Field(default_factory=list, max_length=512, description="Program and arguments.")
    shell: str = Field(default="", max_length=16_384, description="Instead of argv, if allowed: a sh command line.")
    cwd: str = Field(default="", max_length=1024, description="Folder in the file store.")
    timeout_seconds: float = Field(default=0, ge=0, le=24 * 3600)

    @model_validator(mode="after")
    def _one_command(self) -> ExecuteArgs:
        if bool(self.argv) == bool(self.shell):
            raise ValueError("give argv (a list: program and arguments), or shell (a command line), not both")
        if any("\0" in arg for arg in [*self.argv, self.shell]):
            raise ValueError("arguments must not contain NUL characters")
        return self


class ExecuteResult(Output):
    exit_code: int | None
    signal: str | None
    timed_out: bool
    duration_ms: int
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    truncated: bool
    output_path: str | None  # all kept output, for files.read (the description says so)
    isolation: str
