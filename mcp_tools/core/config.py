"""Configuration: one TOML file, validated with pydantic, secrets also from the environment.

Core sections are `[server]`, `[policy]`, `[http]`, `[approvals]` and `[state]`; every other top-level table must
name a namespace from the catalog and is validated by that namespace's own model, so this
module knows nothing about any service.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from mcp_tools.oauth.settings import OAuthSettings
from mcp_tools.servers import CATALOG, SHARED_SECTIONS
from mcp_tools.util.secrets import scrub_text
from mcp_tools.util.suggest import closest

APP_NAME = "mcp-tools"
CONFIG_ENV = "MCP_TOOLS_CONFIG"
TOKEN_ENV = "MCP_TOOLS_HTTP_TOKEN"
METRICS_TOKEN_ENV = "MCP_TOOLS_METRICS_TOKEN"
TOKEN_ENV_PREFIX = "MCP_TOOLS_HTTP_TOKEN_"
MIN_TOKEN_CHARS = 32
MIN_TOKEN_DISTINCT_CHARS = 10
MAKE_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


# RFC 6750's b64token: what a client can send after `Authorization: Bearer `.
BEARER_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
# Words of the placeholders in examples ("paste-the-secrets.token_urlsafe-output-here"): a token
# holding one was copied from a page, not made. A random token holds one of them by chance less
# than once in a million.
PLACEHOLDER_WORDS = (
    "token_urlsafe",
    "paste",
    "example",
    "placeholder",
    "changeme",
    "change-me",
    "change_me",
    "replace-me",
    "replace_me",
    "your-",
    "your_",
)
WEAKNESSES = {
    "unsendable": (
        "",
        "hold characters a bearer token cannot (RFC 6750 allows A-Z a-z 0-9 - . _ ~ + / and = at the end; "
        "no spaces, quotes or <>)",
    ),
    "placeholder": ("", f"look like placeholders copied from an example ({', '.join(PLACEHOLDER_WORDS)})"),
    "guessable": ("are ", f"shorter than {MIN_TOKEN_CHARS} characters or too repetitive"),
}


def token_weakness(token: str) -> str | None:
    """Why a bearer token must not guard a reachable address, or None: it cannot be sent as one
    ("unsendable"), it is an example's placeholder ("placeholder"), or it is shorter than 32
    characters or so repetitive ("aaaa...", "abab...") that length says little ("guessable").
    A token made by `secrets.token_urlsafe(32)` (43 characters) is none of these."""
    if not BEARER_TOKEN.fullmatch(token):
        return "unsendable"
    lowered = token.lower()
    if any(word in lowered for word in PLACEHOLDER_WORDS):
        return "placeholder"
    if len(token) < MIN_TOKEN_CHARS or len(set(token)) < MIN_TOKEN_DISTINCT_CHARS:
        return "guessable"
    return None


def weak_token(token: str) -> bool:
    return token_weakness(token) is not None


def describe_weak_tokens(weaknesses: Mapping[str, str], verb: bool = True) -> str:
    """`token(s) a, b are shorter than ...; token(s) c look like placeholders ...`, by reason."""
    names: dict[str, list[str]] = {}
    for name, why in sorted(weaknesses.items()):
        names.setdefault(why, []).append(name)
    parts = []
    for why, (are, what) in WEAKNESSES.items():
        if why in names:
            parts.append(f"token(s) {', '.join(names[why])} {are if verb else ''}{what}")
    return "; ".join(parts)


ModelT = TypeVar("ModelT", bound=BaseModel)
CORE_SECTIONS = ("server", "policy", "http", "approvals", "state")
STATE_URL_ENV = "MCP_TOOLS_STATE_URL"
STATE_SECRET_ENV = "MCP_TOOLS_STATE_SECRET"
STATE_URL_SCHEMES = ("postgresql://", "postgres://")
# Where a namespace's table sits when not at `[name]`: `[http]` is the server's own HTTP transport,
# so the `http` namespace (outbound requests) keeps its settings in `[http.outbound]`.
NAMESPACE_TABLES = {"http": "http.outbound"}
# Old spellings of settings, still read: (table, old key) -> new key. Each is named once a process.
DEPRECATED_KEYS = {("server", "servers"): "namespaces"}
_deprecations_shown: set[tuple[str, str]] = set()


class ConfigError(Exception):
    """A config problem, worded for the person who edits the file."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _renamed_keys(table: str, data: Any) -> Any:
    """Read an old spelling as its new name, saying so on stderr once; both spellings is an error."""
    if not isinstance(data, Mapping):
        return data
    data = dict(data)
    for (where, old), new in DEPRECATED_KEYS.items():
        if where != table or old not in data:
            continue
        if new in data:
            raise ValueError(f"{new} and {old} are the same setting ({old} is its old name); keep {new} only")
        data[new] = data.pop(old)
        if (table, old) not in _deprecations_shown:
            _deprecations_shown.add((table, old))
            print(f"mcp-tools: [{table}] {old} is deprecated; call it {new} (the same list)", file=sys.stderr)
    return data


class ServerSettings(_Section):
    """What this server runs and serves, and where it keeps its files."""

    namespaces: list[str] | None = Field(
        default=None,
        description="Namespaces to run. Unset: every namespace that is configured (files and inbox need nothing). "
        "Its old name, servers, is still read.",
        examples=[["files", "inbox"]],
    )
    tools: list[str] | None = Field(
        default=None,
        description="Tools to serve: namespace, namespace.tier (core | extended), namespace.tool, '*' or '*.core'; "
        "a leading '-' excludes. Unset: ['*.core'], the core tier of every running namespace.",
        examples=[["files", "inbox.core", "-files.move"]],
    )
    discovery: Literal["static", "dynamic"] = Field(
        default="static",
        description="'dynamic': also serve toolsets_list and toolsets_enable, so the model can add toolsets itself.",
    )
    wire_separator: Literal["_", "."] = Field(
        default="_",
        description="Wire names are namespace_method; '.' gives namespace.method (some clients reject dots).",
    )
    state_dir: Path | None = Field(
        default=None,
        description="Approvals, the audit log, indexes. Unset: $MCP_TOOLS_STATE_DIR or the platform's state dir.",
        examples=["~/.local/state/mcp-tools"],
    )
    data_dir: Path | None = Field(
        default=None,
        description="The file store and the inbox's blobs. Unset: $MCP_TOOLS_DATA_DIR or the platform's data dir.",
        examples=["~/.local/share/mcp-tools"],
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="warning",
        description="Our own loggers; other libraries stay at INFO or quieter (MCP_TOOLS_LIBRARY_LOG_LEVEL lowers "
        "them).",
    )
    max_result_tokens: int = Field(
        default=20_000, ge=1_000, le=1_000_000, description="Most one tool result may hold (characters / 4)."
    )

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        return _renamed_keys("server", data)

    @property
    def servers(self) -> list[str] | None:
        """The old name of `namespaces`."""
        return self.namespaces

    @field_validator("namespaces")
    @classmethod
    def _known_namespaces(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if name not in CATALOG:
                raise ValueError(f"unknown namespace {name!r}; expected some of {sorted(CATALOG)}")
        return value

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, value: list[str] | None) -> list[str] | None:
        from mcp_tools.core.toolsets import parse_entries

        if value is not None:
            parse_entries(value, CATALOG)  # tiers and tool names are checked when the namespaces load
        return value


class PolicyRule(_Section):
    match: str = Field(
        description="Glob over canonical tool names, e.g. 'files.*' or '*.delete'.", examples=["files.write"]
    )
    risk: Literal["low", "medium", "high", "deny"] = Field(
        description="The risk of the tools it matches: low runs, medium runs and is reported, high asks first.",
        examples=["high"],
    )


class PolicySettings(_Section):
    """Which tools run, which ask the person first, and which are hidden."""

    rules: list[PolicyRule] = Field(
        default_factory=list,
        description="Your own risks, checked in order before the shipped defaults. Every key after a "
        "[[policy.rules]] line belongs to that rule, so rules come last.",
    )
    disabled: list[str] = Field(
        default_factory=list, description="Globs of tools to hide.", examples=[["files.delete"]]
    )
    read_only: bool = Field(default=False, description="true hides and refuses every tool that changes anything.")
    on_no_elicitation: Literal["approve_out_of_band", "deny"] = Field(
        default="approve_out_of_band",
        description="A high-risk call from a client that cannot ask the person: wait for an approval outside the "
        "chat, or refuse.",
    )
    approval_ttl_seconds: int = Field(
        default=600, ge=10, le=7 * 24 * 3600, description="How long an approval stays valid."
    )
    elicitation_timeout_seconds: float = Field(
        default=300.0, gt=0, le=3600, description="How long a confirmation form in the client waits for an answer."
    )
    audit_max_chars: int = Field(
        default=200, ge=16, le=100_000, description="Characters of each argument kept in the audit log."
    )


class HttpToken(_Section):
    """A bearer token with settings: `[http.tokens.NAME] token = "..."`."""

    token: SecretStr = Field(description="The bearer token itself.", examples=["a-long-random-string"])
    person_answers_forms: bool = Field(
        default=False,
        description="The client using this token shows confirmation forms to a person, who answers them; "
        "only then does an answered form count as the person's yes. Otherwise high-risk calls are approved "
        "out of band (the page, Telegram, the CLI).",
    )


class HttpSettings(_Section):
    """`mcp-tools serve --http`: streamable HTTP for remote clients."""

    host: str = Field(default="127.0.0.1", description="Address to listen on.")
    port: int = Field(default=8765, ge=0, le=65535, description="Port to listen on.")
    tokens: dict[str, HttpToken] = Field(
        default_factory=dict,
        description='Named bearer tokens; the name is recorded in the audit log. NAME = "token" in [http.tokens], '
        "or a [http.tokens.NAME] table as below. Or MCP_TOOLS_HTTP_TOKEN(_NAME).",
        examples=["laptop"],
    )
    allowed_hosts: list[str] = Field(default_factory=list, description="Extra Host values allowed besides loopback.")
    allowed_origins: list[str] = Field(default_factory=list, description="Extra browser Origins allowed.")
    max_connections: int = Field(
        default=256,
        ge=8,
        le=100_000,
        description="Open connections at most (lowered to fit the descriptor limit); beyond, the one idle longest "
        "is closed, or the newcomer gets 503.",
    )
    max_requests: int = Field(
        default=100, ge=1, le=100_000, description="Requests handled at once; more get 503 (not /healthz)."
    )
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=64 * 1024,
        le=1024 * 1024 * 1024,
        description="Largest MCP request body (one tool call, its arguments included); a larger one gets 413 "
        "with a JSON-RPC error naming this limit. Base64 content takes 4/3 of its size.",
    )
    header_timeout_seconds: float = Field(
        default=10,
        gt=0,
        le=600,
        description="Time to send a complete request head, on a new connection and between requests.",
    )
    keep_alive_seconds: float = Field(
        default=5, gt=0, le=600, description="An idle connection between requests is closed after this."
    )
    body_timeout_seconds: float = Field(
        default=30,
        gt=0,
        le=3600,
        description="Time to send a whole request body, however it trickles in (a streamed text call excepted); "
        "408 beyond it.",
    )
    public_max_body_bytes: int = Field(
        default=64 * 1024,
        ge=4096,
        le=4 * 1024 * 1024,
        description="Largest body on the paths open to anyone (the OAuth endpoints, the approvals page, the "
        "Telegram webhook); more gets 413.",
    )
    public_max_requests: int = Field(
        default=20,
        ge=1,
        le=10_000,
        description="Requests on the paths open to anyone handled at once, apart from max_requests; more get 503.",
    )
    public_requests_per_address: int = Field(
        default=4, ge=1, le=10_000, description="Of those, at once from one client address; more get 429."
    )
    public_requests_per_minute: int = Field(
        default=60,
        ge=1,
        le=100_000,
        description="Requests on the paths open to anyone per client address and minute; 429 with Retry-After "
        "beyond it.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses or networks of reverse proxies whose X-Forwarded-For names the client; from "
        "anyone else the header is ignored.",
        examples=["127.0.0.1"],
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description="Bearer token a scraper of --metrics-port must send (or MCP_TOOLS_METRICS_TOKEN).",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _check_proxies(cls, value: list[str]) -> list[str]:
        import ipaddress

        networks = []
        for entry in value:
            try:
                networks.append(str(ipaddress.ip_network(entry.strip(), strict=False)))
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8)") from None
        return networks

    @field_validator("tokens", mode="before")
    @classmethod
    def _plain_tokens(cls, value: Any) -> Any:
        """`name = "token"` is a token with no settings: its client's forms are not a person's yes."""
        if isinstance(value, Mapping):
            return {name: {"token": entry} if isinstance(entry, str) else entry for name, entry in value.items()}
        return value

    oauth: OAuthSettings | None = Field(default=None, description="OAuth 2.1 sign-in for clients (docs/oauth.md).")


TELEGRAM_TOKEN_ENV = "MCP_TOOLS_TELEGRAM_BOT_TOKEN"


class ApprovalPageSettings(_Section):
    """The approvals page: `mcp-tools approvals serve`, and /approvals in `serve --http`."""

    enabled: bool = Field(
        default=True, description="Serve the page (`approvals serve`, and /approvals in `serve --http`)."
    )
    host: str = Field(default="127.0.0.1", description="Address of `mcp-tools approvals serve`.")
    port: int = Field(default=8766, ge=0, le=65535, description="Port of `mcp-tools approvals serve`.")
    url: str | None = Field(
        default=None,
        description="Public address of the page, for links in messages; set it to make stdio calls wait for the page.",
        examples=["http://127.0.0.1:8766/approvals"],
    )
    login_ttl_seconds: int = Field(
        default=600, ge=30, le=24 * 3600, description="How long a sign-in link works (once)."
    )
    session_hours: float = Field(default=12, gt=0, le=24 * 30, description="How long a signed-in browser stays in.")
    allowed_hosts: list[str] = Field(
        default_factory=list, description="Names the page is reached by, when it listens beyond loopback."
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return value.rstrip("/") if value else None


class TelegramSettings(_Section):
    """Approvals as Telegram messages with Approve and Deny buttons (docs/approvals.md)."""

    bot_token: SecretStr | None = Field(
        default=None, description=f"The bot's token; better set {TELEGRAM_TOKEN_ENV} than write it here."
    )
    chat_id: int = Field(description="The chat the bot writes to.", examples=[123456789])
    allowed_user_ids: list[int] = Field(
        default_factory=list, description="Telegram users whose presses count.", examples=[[123456789]]
    )
    api_base: str = Field(default="https://api.telegram.org", description="The Bot API root (proxies, tests).")
    updates: Literal["polling", "webhook"] = Field(
        default="polling", description="How presses arrive: this server polls, or Telegram calls webhook_url."
    )
    webhook_url: str | None = Field(
        default=None, description="This server's public https address; Telegram calls its /telegram/webhook."
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="Checked on every webhook call; unset: derived from the bot token."
    )
    poll_timeout_seconds: int = Field(default=30, ge=0, le=50, description="Long-poll wait of one getUpdates.")

    @field_validator("api_base", "webhook_url")
    @classmethod
    def _check_http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if value else None


class NotifySettings(_Section):
    """A hook told when an approval is waiting: a command to run, or a URL to POST to."""

    command: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="Program and arguments, given each new pending approval as JSON on stdin.",
        examples=[["notify-send", "mcp-tools: an approval is waiting"]],
    )
    url: str | None = Field(default=None, description="Receives each new pending approval as a JSON POST.")
    timeout_seconds: float = Field(default=10, gt=0, le=120, description="Most a hook may take.")

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return value or None


class ApprovalsSettings(_Section):
    """How high-risk calls reach you when the client cannot ask (see docs/approvals.md)."""

    # Claude Desktop cancels a tool call after about 60 s whatever the progress; waiting less keeps
    # the approval alive for the retry flow instead of having it withdrawn by the cancel.
    wait_seconds: float = Field(
        default=45,
        ge=0,
        le=3600,
        description="A call waits this long for your answer (Claude Desktop gives up at ~60 s).",
    )
    progress_interval_seconds: float = Field(
        default=10, gt=0, le=300, description="How often a waiting call reports progress to the client."
    )
    page: ApprovalPageSettings = Field(default_factory=ApprovalPageSettings)
    telegram: TelegramSettings | None = None
    notify: NotifySettings | None = None


class StateSettings(_Section):
    """Where approvals, decisions and the audit log live: SQLite in the state dir, or a PostgreSQL server
    that several replicas share (docs/deploy.md; the [postgres] extra)."""

    url: SecretStr | None = Field(
        default=None,
        description="postgresql://user:password@host:port/database; unset keeps the SQLite file in the state dir. "
        "Or MCP_TOOLS_STATE_URL.",
        examples=["postgresql://mcp_tools:PASSWORD@db.internal:5432/mcp_tools"],
    )
    secret: SecretStr | None = Field(
        default=None,
        description="At least 32 bytes shared by every replica that uses the same state. Or MCP_TOOLS_STATE_SECRET.",
        examples=["32+ random bytes, the same on every replica"],
    )
    pool_size: int = Field(
        default=8, ge=1, le=200, description="Most connections each replica keeps open to the database."
    )
    connect_timeout_seconds: float = Field(default=5.0, gt=0, le=120, description="Most one connection attempt takes.")

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: SecretStr | None) -> SecretStr | None:
        if (
            value is not None
            and value.get_secret_value()
            and not value.get_secret_value().startswith(STATE_URL_SCHEMES)
        ):
            raise ValueError("url must start with postgresql:// (leave it unset for the SQLite file)")
        return value if value is not None and value.get_secret_value() else None


# The core sections, in the order the starter config shows them.
CORE_MODELS: dict[str, type[BaseModel]] = {
    "server": ServerSettings,
    "policy": PolicySettings,
    "http": HttpSettings,
    "approvals": ApprovalsSettings,
    "state": StateSettings,
}


@dataclass
class Config:
    """The whole configuration, core sections validated, namespace sections still raw."""

    server: ServerSettings = field(default_factory=ServerSettings)
    policy: PolicySettings = field(default_factory=PolicySettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    approvals: ApprovalsSettings = field(default_factory=ApprovalsSettings)
    state: StateSettings = field(default_factory=StateSettings)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: Path | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    # Where a namespace's section sits when not at `[name]`, for error messages.
    section_names: dict[str, str] = field(default_factory=dict)

    def section_name(self, namespace: str) -> str:
        return self.section_names.get(namespace, namespace)

    def state_dir(self) -> Path:
        return _pick_dir(self.server.state_dir, self.environ.get("MCP_TOOLS_STATE_DIR"), "state")

    def data_dir(self) -> Path:
        return _pick_dir(self.server.data_dir, self.environ.get("MCP_TOOLS_DATA_DIR"), "data")

    def weak_http_tokens(self) -> dict[str, str]:
        """The bearer tokens that must not guard a reachable address, by name: why (`token_weakness`)."""
        found = {name: token_weakness(token) for name, token in self.http_tokens().items()}
        return {name: why for name, why in sorted(found.items()) if why is not None}

    def http_tokens(self) -> dict[str, str]:
        """Named bearer tokens: `[http.tokens]`, `MCP_TOOLS_HTTP_TOKEN` and `MCP_TOOLS_HTTP_TOKEN_<NAME>`."""
        tokens = {name: entry.token.get_secret_value() for name, entry in self.http.tokens.items()}
        for key, value in self.environ.items():
            if key == TOKEN_ENV and value:
                tokens["env"] = value
            elif key.startswith(TOKEN_ENV_PREFIX) and value:
                tokens[key[len(TOKEN_ENV_PREFIX) :].lower()] = value
        return tokens

    def metrics_token(self) -> str | None:
        """`[http] metrics_token`, or MCP_TOOLS_METRICS_TOKEN: what a scraper of `--metrics-port` sends."""
        configured = self.http.metrics_token.get_secret_value() if self.http.metrics_token else ""
        return configured or self.environ.get(METRICS_TOKEN_ENV, "") or None

    def state_url(self) -> str | None:
        """`[state] url`, or MCP_TOOLS_STATE_URL; None keeps the SQLite state of one machine."""
        configured = self.state.url.get_secret_value() if self.state.url else ""
        url = configured or self.environ.get(STATE_URL_ENV, "").strip()
        if url and not url.startswith(STATE_URL_SCHEMES):
            raise ConfigError(f"{STATE_URL_ENV} must start with postgresql:// (unset it for the SQLite file)")
        return url or None

    def state_secret(self) -> str | None:
        """`[state] secret`, or MCP_TOOLS_STATE_SECRET: shared by the replicas of one deployment."""
        configured = self.state.secret.get_secret_value() if self.state.secret else ""
        secret = configured or self.environ.get(STATE_SECRET_ENV, "")
        if secret and len(secret.encode()) < 32:
            raise ConfigError("[state] secret (or MCP_TOOLS_STATE_SECRET) must be at least 32 bytes")
        return secret or None

    def named_paths(self) -> tuple[Path, ...]:
        """Every path a value of the config names: absolute or `~` paths anywhere, and relative ones
        under keys that name a file (`token_file`, `client_secrets`, `tls_key`, ...)."""
        found: list[Path] = []
        core = {name: getattr(self, name).model_dump() for name in CORE_SECTIONS}
        _collect_paths({**core, **self.sections}, "", found)
        return tuple(dict.fromkeys(found))

    def form_principals(self) -> frozenset[str]:
        """Token names whose client shows confirmation forms to a person (`person_answers_forms`).

        A token replaced from the environment is not one of them: the mark belongs to the token
        the person configured it for.
        """
        tokens = self.http_tokens()
        return frozenset(
            name
            for name, entry in self.http.tokens.items()
            if entry.person_answers_forms and tokens.get(name) == entry.token.get_secret_value()
        )

    def telegram_token(self) -> str | None:
        """`[approvals.telegram] bot_token`, or MCP_TOOLS_TELEGRAM_BOT_TOKEN."""
        telegram = self.approvals.telegram
        configured = telegram.bot_token.get_secret_value() if telegram and telegram.bot_token else ""
        return configured or self.environ.get(TELEGRAM_TOKEN_ENV) or None


_PATH_KEY = re.compile(r"(file|path|secrets|cert|certificate|key_file|keyfile|tls_key|ssl_key)$", re.IGNORECASE)


def _collect_paths(value: Any, key: str, found: list[Path]) -> None:
    if isinstance(value, Mapping):
        for name, item in value.items():
            _collect_paths(item, str(name), found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_paths(item, key, found)
    elif isinstance(value, Path | str) and str(value).strip() and "\0" not in str(value):
        text = str(value).strip()
        if text.startswith(("/", "~")) or (_PATH_KEY.search(key) and "://" not in text and "\n" not in text):
            found.append(Path(text).expanduser().absolute())


def _pick_dir(configured: Path | None, from_env: str | None, kind: str) -> Path:
    if configured is not None:
        return configured.expanduser()
    if from_env:
        return Path(from_env).expanduser()
    import platformdirs

    if kind == "state":
        return Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_config_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def locate_config(explicit: str | Path | None, environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    """Which file to read, and whether the person asked for it (then it must exist)."""
    if explicit:
        return Path(explicit).expanduser(), True
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV]).expanduser(), True
    path = default_config_path()
    return (path, False) if path.is_file() else (None, False)


def load_config(explicit: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate the config; with no file at all, the embedded defaults."""
    environ = dict(os.environ if environ is None else environ)
    path, required = locate_config(explicit, environ)
    if path is None:
        return Config(environ=environ)
    if path.is_dir():
        raise ConfigError(folder_given_as_config(path))
    if not path.is_file():
        if required:
            from mcp_tools.util.commands import mcp_tools

            raise ConfigError(f"config file {path} does not exist (run `{mcp_tools('config', 'init')}` to write one)")
        return Config(environ=environ)
    try:
        raw = tomllib.loads(config_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    config = parse_config(raw, environ)
    config.source = path
    return config


def config_text(path: Path) -> str:
    """The file's text, which TOML requires to be UTF-8 (a byte-order mark is accepted)."""
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(data) > 1 and b"\x00" in data[:2]):
        raise ConfigError(
            f"{path}: the config file must be UTF-8, and this one looks like UTF-16: save it as UTF-8 "
            '(in Notepad: Save As, Encoding "UTF-8"; or run: iconv -f UTF-16 -t UTF-8 FILE > NEW)'
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}: the config file must be UTF-8, but byte 0x{data[exc.start]:02x} on line {line} is not "
            "(saved as Latin-1 or Windows-1252?); save it as UTF-8"
        ) from None


def folder_given_as_config(folder: Path) -> str:
    """What to say when the config path names a folder: the file to give instead."""
    from mcp_tools.util.commands import executable, quote

    inside = folder / "config.toml"
    if inside.is_file():
        return f"config path {folder} is a folder; give the config file inside it, e.g. --config {quote(inside)}"
    return (
        f"config path {folder} is a folder, not a config file (a TOML file such as {inside}); "
        f"run `{executable()} --config {quote(inside)} config init` to write one there"
    )


def parse_config(raw: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Config:
    """Validate a config mapping (as read from TOML); errors name the key and what it expects."""
    environ = dict(os.environ if environ is None else environ)
    sections: dict[str, dict[str, Any]] = {}
    http_table = dict(raw.get("http", {})) if isinstance(raw.get("http", {}), Mapping) else raw.get("http")
    if isinstance(http_table, dict) and "outbound" in http_table:
        # `[http]` configures the server's own HTTP transport; the `http` namespace (outbound
        # requests) keeps its settings apart in `[http.outbound]`, so the two never mix.
        outbound = http_table.pop("outbound")
        if not isinstance(outbound, Mapping):
            raise ConfigError("[http.outbound] must be a table of settings")
        sections["http"] = dict(outbound)
    for key, value in raw.items():
        if key in CORE_SECTIONS:
            continue
        if key not in CATALOG and key not in SHARED_SECTIONS:
            known = list(dict.fromkeys([*CORE_SECTIONS, *sorted(CATALOG), *sorted(SHARED_SECTIONS)]))
            guess = closest(key, known)
            meant = f"did you mean [{guess[0]}]? " if guess else ""
            raise ConfigError(f"unknown section [{key}]; {meant}expected one of: {', '.join(known)}")
        if not isinstance(value, Mapping):
            raise ConfigError(f"[{key}] must be a table of settings")
        sections[key] = dict(value)
    return Config(
        section_names=dict(NAMESPACE_TABLES),
        server=validate_section("server", ServerSettings, raw.get("server", {})),
        policy=validate_section("policy", PolicySettings, raw.get("policy", {})),
        http=validate_section("http", HttpSettings, http_table if http_table is not None else {}),
        approvals=validate_section("approvals", ApprovalsSettings, raw.get("approvals", {})),
        state=validate_section("state", StateSettings, raw.get("state", {})),
        sections=sections,
        environ=environ,
    )


def validate_section(section: str, model: type[ModelT], data: Any) -> ModelT:
    """Validate one section; the error names `section.key` and the expected value."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_config_errors(section, exc)) from None


def describe_config_errors(section: str, exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False):
        key = ".".join([section, *(str(part) for part in error["loc"])])
        if error["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown setting")
        else:
            got = error.get("input")
            hidden = any(word in key.lower() for word in ("secret", "token", "key", "password", "credential"))
            shown = "" if isinstance(got, Mapping) or hidden else f" (got {got!r})"
            lines.append(f"{key}: {error['msg']}{shown}")
    return scrub_text("invalid config: " + "; ".join(lines))
