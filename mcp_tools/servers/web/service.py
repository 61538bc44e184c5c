"""The Tavily client behind `web.search`: the request it sends, the answer it keeps, its errors in words."""

from __future__ import annotations

import contextvars
import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.web.config import WebConfig
from mcp_tools.servers.web.models import SearchArgs, SearchResult
from mcp_tools.util.secrets import known_secrets, scrub_text

MAX_TITLE_CHARS = 300
MAX_SNIPPET_CHARS = 2_000
MAX_ANSWER_CHARS = 4_000
MAX_URL_CHARS = 2_048  # longer urls are dropped like malformed ones: a cut url opens nothing
MAX_UPSTREAM_DETAIL_CHARS = 300


# --- the service -------------------------------------------------------------------------------

_last_status: contextvars.ContextVar[tuple[int, str | None] | None] = contextvars.ContextVar(
    "tavily_last_status", default=None
)


async def _remember_status(response: Any) -> None:
    """The library folds 403, 432 and 433 into one error; the status tells them apart."""
    _last_status.set((response.status_code, response.headers.get("retry-after")))


class WebService:
    """Holds the settings; the HTTP client is built on first use so start-up stays cheap."""

    def __init__(self, config: WebConfig, api_key: str) -> None:
        self.config = config
        self._api_key = SecretStr(api_key)
        known_secrets.add(api_key)
        self._client: Any = None
        self._http: Any = None

    def __repr__(self) -> str:
        return f"WebService(api_base_url={self.config.api_base_url!r}, api_key='**********')"

    def tavily(self) -> Any:
        if self._client is None:
            import httpx
            from tavily import AsyncTavilyClient

            self._http = httpx.AsyncClient(
                base_url=self.config.api_base_url,
                follow_redirects=False,
                event_hooks={"response": [_remember_status]},
            )
            # An explicit key and an explicit client: the library never enters keyless mode.
            self._client = AsyncTavilyClient(
                api_key=self._api_key.get_secret_value(),
                api_base_url=self.config.api_base_url,
                client=self._http,
                client_source="mcp-tools",
            )
        return self._client

    def redact(self, text: str) -> str:
        """The key (and any 8+ character prefix of it), every other known secret and URL credentials out."""
        return scrub_text(text)

    async def aclose(self) -> None:
        if self._http is not None:
            http, self._http, self._client = self._http, None, None
            await http.aclose()


_DOMAIN_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def normalize_domain(raw: str, field: str) -> str:
    """A bare host name, lower case, IDNA-encoded; a URL or a path is an error, not a guess."""
    domain = raw.strip().lower().rstrip(".")
    if "://" in domain or "/" in domain:
        raise ToolFailure(
            "invalid_arguments",
            f"{field} must be a bare domain, not a URL or path: {raw[:80]!r}",
            "give only the host, e.g. 'python.org'",
        )
    wildcard = domain.startswith("*.")
    host = domain[2:] if wildcard else domain
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        host = ""
    labels = host.split(".") if host else []
    if not labels or len(host) > 253 or not all(_DOMAIN_LABEL.match(label) for label in labels):
        raise ToolFailure(
            "invalid_arguments",
            f"{field} is not a domain name: {raw[:80]!r}",
            "use a host name such as 'python.org' or 'docs.python.org'",
        )
    return f"*.{host}" if wildcard else host


def normalize_domains(values: list[str], name: str) -> list[str]:
    unique: dict[str, None] = {}
    for index, value in enumerate(values):
        unique[normalize_domain(value, f"{name}[{index}]")] = None
    return list(unique)


def build_request(args: SearchArgs, config: WebConfig) -> dict[str, Any]:
    """The keyword arguments for `AsyncTavilyClient.search`; raw page content is never asked for."""
    query = " ".join(args.query.split())
    if not query:
        raise ToolFailure("invalid_arguments", "query is blank", "say what to search for")
    include = normalize_domains(args.include_domains, "include_domains")
    exclude = normalize_domains(args.exclude_domains, "exclude_domains")
    overlap = sorted(set(include) & set(exclude))
    if overlap:
        raise ToolFailure(
            "invalid_arguments",
            f"{overlap[0]!r} is in both include_domains and exclude_domains",
            "remove it from one of the lists",
        )
    request: dict[str, Any] = {
        "query": query,
        "search_depth": args.search_depth or config.search_depth,
        "max_results": args.max_results or config.max_results,
        "include_answer": "advanced",
        "include_raw_content": False,
        "include_images": False,
        "timeout": config.timeout_seconds,
    }
    if args.topic:
        request["topic"] = args.topic
    if args.time_range:
        request["time_range"] = args.time_range
    if include:
        request["include_domains"] = include
    if exclude:
        request["exclude_domains"] = exclude
    return request


_INVISIBLE = dict.fromkeys([0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def clean_text(value: Any, limit: int, *, single_line: bool = False) -> str:
    """Web text minus known secrets, control, bidi-override and zero-width characters, cut to a size."""
    if not isinstance(value, str):
        return ""
    text = known_secrets.scrub(value).translate(_INVISIBLE)
    text = "".join(char for char in text if char in "\n\t" or unicodedata.category(char) not in ("Cc", "Cs", "Co"))
    text = " ".join(text.split()) if single_line else re.sub(r"[ \t]*\n\s*\n\s*", "\n\n", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def parse_response(payload: Any, limit: int) -> tuple[str | None, list[SearchResult]]:
    """Keep the documented fields of well-formed http(s) results; anything else is dropped."""
    if isinstance(payload, dict) and payload.get("results") is None:
        payload = {**payload, "results": []}
    if not isinstance(payload, dict) or not isinstance(payload["results"], list):
        raise ToolFailure(
            "upstream_error", "Tavily answered in an unexpected shape", "try again; report it if it persists"
        )
    answer = clean_text(payload.get("answer"), MAX_ANSWER_CHARS) or None
    results: list[SearchResult] = []
    for item in payload["results"]:
        if len(results) >= limit:
            break
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        url = item["url"].strip()
        if len(url) > MAX_URL_CHARS:
            continue
        if urlsplit(url).scheme not in ("http", "https") or any(char.isspace() for char in url):
            continue
        score = item.get("score")
        published = item.get("published_date")
        results.append(
            SearchResult(
                title=clean_text(item.get("title"), MAX_TITLE_CHARS, single_line=True),
                url=url,
                content=clean_text(item.get("content"), MAX_SNIPPET_CHARS),
                score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
                published_date=clean_text(published, 64, single_line=True) or None,
            )
        )
    return answer, results


def _upstream_detail(service: WebService, error: BaseException) -> str:
    detail = clean_text(service.redact(str(error)), MAX_UPSTREAM_DETAIL_CHARS, single_line=True)
    return f": {detail}" if detail else ""


def translate_error(service: WebService, error: Exception, status: tuple[int, str | None] | None) -> ToolFailure:
    """One clear failure per cause; the key is never part of what comes back."""
    import httpx
    import tavily.errors as tavily_errors

    code, retry_after = status or (0, None)
    if isinstance(error, tavily_errors.TimeoutError | httpx.TimeoutException):
        return ToolFailure(
            "timeout",
            f"Tavily did not answer within {service.config.timeout_seconds:g} seconds",
            "try again, use search_depth 'basic', or raise [web] timeout_seconds",
        )
    if isinstance(error, tavily_errors.InvalidAPIKeyError):
        return ToolFailure(
            "not_configured",
            "Tavily refused the API key (HTTP 401: missing, invalid or expired)",
            "check TAVILY_API_KEY or [web] api_key; keys are at app.tavily.com",
        )
    if isinstance(error, tavily_errors.UsageLimitExceededError):
        wait = f" after {retry_after} seconds" if retry_after and retry_after.isdigit() else " in a minute"
        return ToolFailure(
            "upstream_error",
            "Tavily rate limit reached (HTTP 429: too many requests)",
            f"wait and try again{wait}",
        )
    if isinstance(error, tavily_errors.ForbiddenError):
        if code == 432:
            return ToolFailure(
                "upstream_error",
                "Tavily plan limit exceeded (HTTP 432): the account's search credits are spent",
                "the account owner must upgrade the plan or wait for the monthly reset",
            )
        if code == 433:
            return ToolFailure(
                "upstream_error",
                "Tavily pay-as-you-go limit exceeded (HTTP 433)",
                "the account owner can raise the limit on the Tavily dashboard",
            )
        return ToolFailure(
            "upstream_error",
            f"Tavily refused the request (HTTP 403){_upstream_detail(service, error)}",
            "check that the key's plan allows this kind of search",
        )
    if isinstance(error, tavily_errors.BadRequestError):
        return ToolFailure(
            "invalid_arguments",
            f"Tavily rejected the search (HTTP 400){_upstream_detail(service, error)}",
            "fix the arguments named in the message and try again",
        )
    if isinstance(error, httpx.HTTPStatusError):
        return ToolFailure(
            "upstream_error",
            f"Tavily answered HTTP {error.response.status_code}",
            "the service may be down; try again in a few minutes",
        )
    if isinstance(error, httpx.TransportError):
        host = urlsplit(service.config.api_base_url).hostname
        return ToolFailure(
            "upstream_error",
            f"could not reach Tavily at {host} ({type(error).__name__})",
            "check the network connection or [web] api_base_url",
        )
    if isinstance(error, ValueError):
        return ToolFailure("upstream_error", "Tavily answered with something that is not JSON", "try again later")
    return ToolFailure(
        "upstream_error",
        f"the Tavily search failed ({type(error).__name__})",
        "try again; report it if it persists",
    )
