"""Configuration: one TOML file, validated with pydantic, secrets also from the environment.

Core sections are `[server]`, `[policy]`, `[http]`, `[approvals]` and `[state]`; every other top-level table must
name a namespace from the catalog and is validated by that namespace's own model, so this
module knows nothing about any service.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from mcp_tools.oauth.settings import OAuthSettings
from mcp_tools.secrets import scrub_text
from mcp_tools.servers import CATALOG, SHARED_SECTIONS

APP_NAME = "mcp-tools"
CONFIG_ENV = "MCP_TOOLS_CONFIG"
TOKEN_ENV = "MCP_TOOLS_HTTP_TOKEN"
TOKEN_ENV_PREFIX = "MCP_TOOLS_HTTP_TOKEN_"
ModelT = TypeVar("ModelT", bound=BaseModel)
CORE_SECTIONS = ("server", "policy", "http", "approvals", "state")
STATE_URL_ENV = "MCP_TOOLS_STATE_URL"
STATE_SECRET_ENV = "MCP_TOOLS_STATE_SECRET"
STATE_URL_SCHEMES = ("postgresql://", "postgres://")


class ConfigError(Exception):
    """A config problem, worded for the person who edits the file."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(_Section):
    servers: list[str] | None = Field(
        default=None, description="Namespaces to serve; unset serves every namespace that is configured."
    )
    tools: list[str] | None = Field(
        default=None,
        description="What is served: namespace, namespace.tier, namespace.tool, '*'/'*.core'; '-' excludes. "
        "Unset: ['*.core'].",
    )
    discovery: Literal["static", "dynamic"] = "static"
    wire_separator: Literal["_", "."] = "_"
    state_dir: Path | None = None
    data_dir: Path | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "warning"
    max_result_tokens: int = Field(
        default=20_000, ge=1_000, le=1_000_000, description="Most one tool result may hold (characters / 4)."
    )

    @field_validator("servers")
    @classmethod
    def _known_servers(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if name not in CATALOG:
                raise ValueError(f"unknown namespace {name!r}; expected some of {sorted(CATALOG)}")
        return value

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, value: list[str] | None) -> list[str] | None:
        from mcp_tools.toolsets import parse_entries

        if value is not None:
            parse_entries(value, CATALOG)  # tiers and tool names are checked when the namespaces load
        return value


class PolicyRule(_Section):
    match: str = Field(description="Glob over canonical tool names, e.g. 'files.*' or '*.delete'.")
    risk: Literal["low", "medium", "high", "deny"]


class PolicySettings(_Section):
    rules: list[PolicyRule] = Field(default_factory=list)
    disabled: list[str] = Field(default_factory=list)
    read_only: bool = False
    on_no_elicitation: Literal["approve_out_of_band", "deny"] = "approve_out_of_band"
    approval_ttl_seconds: int = Field(default=600, ge=10, le=7 * 24 * 3600)
    elicitation_timeout_seconds: float = Field(default=300.0, gt=0, le=3600)
    audit_max_chars: int = Field(default=200, ge=16, le=100_000)


class HttpToken(_Section):
    """A bearer token with settings: `[http.tokens.NAME] token = "..."`."""

    token: SecretStr
    person_answers_forms: bool = Field(
        default=False,
        description="The client using this token shows confirmation forms to a person, who answers them; "
        "only then does an answered form count as the person's yes. Otherwise high-risk calls are approved "
        "out of band (the page, Telegram, the CLI).",
    )


class HttpSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    tokens: dict[str, HttpToken] = Field(
        default_factory=dict, description='NAME = "token", or [http.tokens.NAME] with token and person_answers_forms.'
    )
    allowed_hosts: list[str] = Field(default_factory=list)
    allowed_origins: list[str] = Field(default_factory=list)
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
    header_timeout_seconds: float = Field(
        default=10,
        gt=0,
        le=600,
        description="Time to send a complete request head, on a new connection and between requests.",
    )
    keep_alive_seconds: float = Field(
        default=5, gt=0, le=600, description="An idle connection between requests is closed after this."
    )

    @field_validator("tokens", mode="before")
    @classmethod
    def _plain_tokens(cls, value: Any) -> Any:
        """`name = "token"` is a token with no settings: its client's forms are not a person's yes."""
        if isinstance(value, Mapping):
            return {name: {"token": entry} if isinstance(entry, str) else entry for name, entry in value.items()}
        return value

    oauth: OAuthSettings | None = None


TELEGRAM_TOKEN_ENV = "MCP_TOOLS_TELEGRAM_BOT_TOKEN"


class ApprovalPageSettings(_Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8766, ge=0, le=65535)
    url: str | None = Field(
        default=None,
        description="Public address of the page, for links in messages, e.g. http://127.0.0.1:8766/approvals",
    )
    login_ttl_seconds: int = Field(default=600, ge=30, le=24 * 3600)
    session_hours: float = Field(default=12, gt=0, le=24 * 30)
    allowed_hosts: list[str] = Field(default_factory=list)

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return value.rstrip("/") if value else None


class TelegramSettings(_Section):
    bot_token: SecretStr | None = Field(default=None, description=f"Or {TELEGRAM_TOKEN_ENV}.")
    chat_id: int
    allowed_user_ids: list[int] = Field(default_factory=list)
    api_base: str = "https://api.telegram.org"
    updates: Literal["polling", "webhook"] = "polling"
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    poll_timeout_seconds: int = Field(default=30, ge=0, le=50)

    @field_validator("api_base", "webhook_url")
    @classmethod
    def _check_http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if value else None


class NotifySettings(_Section):
    command: list[str] = Field(default_factory=list, max_length=64)
    url: str | None = None
    timeout_seconds: float = Field(default=10, gt=0, le=120)

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return value or None


class ApprovalsSettings(_Section):
    # Claude Desktop cancels a tool call after about 60 s whatever the progress; waiting less keeps
    # the approval alive for the retry flow instead of having it withdrawn by the cancel.
    wait_seconds: float = Field(default=45, ge=0, le=3600)
    progress_interval_seconds: float = Field(default=10, gt=0, le=300)
    page: ApprovalPageSettings = Field(default_factory=ApprovalPageSettings)
    telegram: TelegramSettings | None = None
    notify: NotifySettings | None = None


class StateSettings(_Section):
    """Where approvals, decisions and the audit log live: SQLite in the state dir, or a PostgreSQL server."""

    url: SecretStr | None = Field(
        default=None,
        description="postgresql://user:password@host:port/database; unset keeps the SQLite file in the state dir.",
    )
    secret: SecretStr | None = Field(
        default=None, description="At least 32 bytes shared by every replica that uses the same state."
    )
    pool_size: int = Field(default=8, ge=1, le=200)
    connect_timeout_seconds: float = Field(default=5.0, gt=0, le=120)

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

    def http_tokens(self) -> dict[str, str]:
        """Named bearer tokens: `[http.tokens]`, `MCP_TOOLS_HTTP_TOKEN` and `MCP_TOOLS_HTTP_TOKEN_<NAME>`."""
        tokens = {name: entry.token.get_secret_value() for name, entry in self.http.tokens.items()}
        for key, value in self.environ.items():
            if key == TOKEN_ENV and value:
                tokens["env"] = value
            elif key.startswith(TOKEN_ENV_PREFIX) and value:
                tokens[key[len(TOKEN_ENV_PREFIX) :].lower()] = value
        return tokens

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
    if not path.is_file():
        if required:
            from mcp_tools.commands import mcp_tools

            raise ConfigError(f"config file {path} does not exist (run `{mcp_tools('config', 'init')}` to write one)")
        return Config(environ=environ)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    config = parse_config(raw, environ)
    config.source = path
    return config


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
            expected = ", ".join([*CORE_SECTIONS, *sorted(CATALOG), *sorted(SHARED_SECTIONS)])
            raise ConfigError(f"unknown section [{key}]; expected one of: {expected}")
        if not isinstance(value, Mapping):
            raise ConfigError(f"[{key}] must be a table of settings")
        sections[key] = dict(value)
    return Config(
        section_names={"http": "http.outbound"},
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
