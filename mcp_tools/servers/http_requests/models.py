"""The arguments and result of `http.request`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from mcp_tools.core.tooling import Arguments, Output
from mcp_tools.servers.http_requests.config import HEADER_NAME
from mcp_tools.util.outbound import RESERVED_HEADERS

Method = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class RequestArgs(Arguments):
    method: Method = "GET"
    url: str = Field(default="", max_length=4096)
    headers: dict[str, str] = Field(default_factory=dict, max_length=50)
    body: str = Field(default="", max_length=1_000_000)
    response_id: str = Field(default="", max_length=40, description="Page an earlier response; no new request.")
    offset: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _url_or_page(self) -> RequestArgs:
        if bool(self.url) == bool(self.response_id):
            raise ValueError("give url for a new request, or response_id (and offset) to read on")
        for name, value in self.headers.items():
            if not HEADER_NAME.match(name) or name.lower() in RESERVED_HEADERS:
                raise ValueError(f"headers: {name!r} cannot be set")
            if any(char in value for char in "\r\n\0") or len(value) > 8192:
                raise ValueError(f"headers: the value of {name!r} is not valid")
        return self


class RequestResult(Output):
    status: int
    url: str
    headers: dict[str, str]
    encoding: Literal["text", "base64", "image", "omitted"]  # a small image as image content
    body: str
    offset: int  # characters of text, or of base64
    total: int  # body length: characters (text) or bytes
    next_offset: int | None
    truncated: bool  # cut at the response size limit
    response_id: str
    redirects: list[str]
