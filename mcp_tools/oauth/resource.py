"""This server as an OAuth 2.1 resource server: tokens checked, challenges answered.

A JWT access token is checked against the issuer's JWKS (found through the issuer's metadata,
cached, fetched again when a token names a key we do not know): signature with an asymmetric
algorithm only (no `none`, no HMAC keyed with a public key), `iss`, `aud` containing this
server's `resource` (RFC 8707), `exp`/`nbf` with a small leeway, the required scopes. Any other
token is asked about at the issuer's introspection endpoint (RFC 7662), when configured; an
accepted answer is kept (by the token's sha256, never the token) until the earlier of its `exp`
and `introspection_cache_seconds`, and checked again on every use. A token for another audience
is refused; it is never passed on to anything. A sender-constrained token (`cnf`: DPoP, mTLS) is
refused too: this server checks no proof of possession, so it would be a bearer token to a thief.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import AccessToken

from mcp_tools.oauth.settings import OAuthSettings

logger = logging.getLogger("mcp_tools.oauth")
# Asymmetric algorithms only: a symmetric one would let a public key be used as an HMAC secret.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
MAX_TOKEN_CHARS = 16_384
METADATA_TIMEOUT = 10.0


class TokenRefused(Exception):
    """Why a token is not accepted; the reason is for the audit log, never the token itself."""

    def __init__(self, reason: str, principal: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.principal = principal


@dataclass
class IssuerInfo:
    jwks_uri: str | None
    introspection_endpoint: str | None
    fetched: float


@dataclass
class KeyCache:
    keys: Any = None  # joserfc KeySet
    kids: set[str] = field(default_factory=set)
    fetched: float = 0.0


class IntrospectionCache:
    """Accepted introspection answers, LRU and bounded, each kept until its own deadline.

    Keys are sha256 digests of the tokens: the tokens themselves are never held. Only answers
    that were accepted are kept; a refusal (inactive, another audience, a failed call) is not.
    """

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._answers: OrderedDict[bytes, tuple[dict[str, Any], float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    def keys(self) -> list[bytes]:
        return list(self._answers)

    def get(self, key: bytes, now: float) -> dict[str, Any] | None:
        found = self._answers.get(key)
        if found is None:
            return None
        claims, until = found
        if now >= until:
            del self._answers[key]
            return None
        self._answers.move_to_end(key)
        return dict(claims)

    def put(self, key: bytes, claims: dict[str, Any], until: float) -> None:
        self._answers[key] = (dict(claims), until)
        self._answers.move_to_end(key)
        while len(self._answers) > self.entries:
            self._answers.popitem(last=False)


def token_key(token: str) -> bytes:
    """What a token is known by in memory: its sha256, never the token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def principal_for(issuer: str, subject: str) -> str:
    """Who a token speaks for: its subject, unique only together with its issuer."""
    return f"{subject}@{issuer}"


class ResourceServer:
    """Verifies access tokens for `[http.oauth]`; one per HTTP app, shared by every request."""

    def __init__(self, settings: OAuthSettings, clock: Any = time.time, embedded: Any = None) -> None:
        self.settings = settings
        self.issuer = settings.issuer_url
        self.clock = clock
        self.embedded = embedded  # an EmbeddedAuthorizationServer: it knows its own tokens
        self._issuer: IssuerInfo | None = None
        self._keys = KeyCache()
        self._lock = asyncio.Lock()
        self.introspected = IntrospectionCache(settings.introspection_cache_entries)
        self._asking: dict[bytes, asyncio.Future[dict[str, Any]]] = {}

    # -- token checks ------------------------------------------------------------------------

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier` contract: the token's facts, or None."""
        try:
            return await self.check(token)
        except TokenRefused:
            return None

    async def check(self, token: str) -> AccessToken:
        """The token's facts, or `TokenRefused` saying why not."""
        if not token or len(token) > MAX_TOKEN_CHARS:
            raise TokenRefused("malformed token")
        if self.embedded is not None:
            found = await self.embedded.load_access_token(token)
            if found is None:
                raise TokenRefused("unknown, expired or revoked token")
            return self._accept(
                {
                    "iss": self.issuer,
                    "sub": found.subject,
                    "aud": found.resource,
                    "exp": found.expires_at,
                    "scope": " ".join(found.scopes),
                    "client_id": found.client_id,
                }
            )
        if token.count(".") == 2:
            return await self._check_jwt(token)
        if self.settings.introspection_client_id is not None:
            return await self._introspect(token)
        raise TokenRefused("not a JWT and no introspection is configured")

    async def _check_jwt(self, token: str) -> AccessToken:
        from joserfc import jwt
        from joserfc.errors import JoseError

        header = _peek_header(token)
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            raise TokenRefused(f"algorithm {str(alg)[:20]!r} is not accepted")
        kid = header.get("kid")
        keys = await self._key_set(str(kid) if isinstance(kid, str) else None)
        try:
            decoded = jwt.decode(token, keys, algorithms=ALGORITHMS)
        except (JoseError, ValueError) as exc:
            raise TokenRefused(f"bad signature or encoding ({type(exc).__name__})") from None
        return self._accept(decoded.claims)

    def _accept(self, claims: dict[str, Any]) -> AccessToken:
        settings = self.settings
        subject = claims.get("sub")
        issuer = claims.get("iss")
        claimed = principal_for(str(issuer), str(subject)) if subject is not None else None
        if issuer != self.issuer:
            raise TokenRefused("wrong issuer", claimed)
        audience = claims.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        if settings.resource not in audiences:
            raise TokenRefused("token is for another audience", claimed)
        now = self.clock()
        leeway = settings.leeway_seconds
        expires = claims.get("exp")
        if not isinstance(expires, int | float) or isinstance(expires, bool):
            raise TokenRefused("token has no expiry", claimed)
        if expires + leeway < now:
            raise TokenRefused("token expired", claimed)
        not_before = claims.get("nbf")
        if isinstance(not_before, int | float) and not_before - leeway > now:
            raise TokenRefused("token not yet valid", claimed)
        if not isinstance(subject, str) or not subject:
            raise TokenRefused("token has no subject")
        if claims.get("cnf") is not None:
            raise TokenRefused("sender-constrained token (cnf): no proof of possession is checked here", claimed)
        scopes = _scopes_of(claims)
        missing = [scope for scope in settings.required_scopes if scope not in scopes]
        if missing:
            raise TokenRefused(f"missing required scope {' '.join(missing)}", claimed)
        return AccessToken(
            token="",  # never kept: what follows needs only the facts
            client_id=str(claims.get("client_id") or claims.get("azp") or subject),
            scopes=scopes,
            expires_at=int(expires),
            resource=settings.resource,
            subject=subject,
            claims={"iss": issuer},
        )

    async def _introspect(self, token: str) -> AccessToken:
        seconds = self.settings.introspection_cache_seconds
        if seconds <= 0:
            return self._accept(await self._ask_issuer(token))
        key = token_key(token)
        cached = self.introspected.get(key, self.clock())
        if cached is not None:
            return self._accept(cached)  # expiry, audience and scopes are checked on every use
        asking = self._asking.get(key)
        if asking is None:  # one question at a time per token: concurrent requests share its answer
            asking = asyncio.ensure_future(self._ask_issuer(token))
            self._asking[key] = asking
            asking.add_done_callback(lambda done: self._asked(key, done))
        claims = await asyncio.shield(asking)
        accepted = self._accept(claims)
        expires = claims["exp"]  # _accept refuses a token without one
        self.introspected.put(key, claims, min(self.clock() + seconds, float(expires)))
        return accepted

    def _asked(self, key: bytes, done: asyncio.Future[dict[str, Any]]) -> None:
        self._asking.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved here, so an answer no request waited for logs nothing

    async def _ask_issuer(self, token: str) -> dict[str, Any]:
        """The issuer's RFC 7662 answer for an active token; `TokenRefused` for anything else."""
        import httpx

        info = await self._issuer_info()
        if info.introspection_endpoint is None:
            raise TokenRefused("the issuer has no introspection endpoint")
        secret = self.settings.introspection_client_secret
        assert secret is not None and self.settings.introspection_client_id is not None
        try:
            async with httpx.AsyncClient(timeout=METADATA_TIMEOUT, trust_env=False) as client:
                answer = await client.post(
                    info.introspection_endpoint,
                    data={"token": token},
                    auth=(self.settings.introspection_client_id, secret.get_secret_value()),
                    headers={"Accept": "application/json"},
                )
            claims = answer.json() if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            raise TokenRefused(f"introspection failed ({type(exc).__name__})") from None
        if not isinstance(claims, dict):
            raise TokenRefused("introspection failed")
        if claims.get("active") is not True:
            raise TokenRefused("token is not active")
        token_type = claims.get("token_type")
        if token_type is not None and str(token_type).lower() != "bearer":
            raise TokenRefused(f"not a bearer access token ({str(token_type)[:20]})")
        if claims.get("token_use", "access_token") != "access_token":
            raise TokenRefused("not an access token")
        claims.setdefault("iss", self.issuer)
        if not claims.get("sub") and isinstance(claims.get("client_id"), str):
            claims["sub"] = claims["client_id"]  # a client acting for itself (client credentials)
        return claims

    # -- discovery -----------------------------------------------------------------------------

    async def _issuer_info(self) -> IssuerInfo:
        if self._issuer is not None and self.clock() - self._issuer.fetched < self.settings.jwks_cache_seconds:
            return self._issuer
        import httpx

        metadata: dict[str, Any] | None = None
        async with httpx.AsyncClient(timeout=METADATA_TIMEOUT, trust_env=False) as client:
            for url in metadata_urls(self.issuer):
                try:
                    answer = await client.get(url, headers={"Accept": "application/json"})
                except httpx.HTTPError as exc:
                    logger.warning("issuer metadata at %s unreachable: %s", url, type(exc).__name__)
                    continue
                if answer.status_code == 200:
                    try:
                        found = answer.json()
                    except ValueError:
                        continue
                    if isinstance(found, dict) and found.get("issuer") == self.issuer:
                        metadata = found
                        break
        if metadata is None:
            raise TokenRefused("the issuer's metadata could not be read")
        self._issuer = IssuerInfo(
            jwks_uri=_https_or_loopback(metadata.get("jwks_uri")),
            introspection_endpoint=_https_or_loopback(metadata.get("introspection_endpoint")),
            fetched=self.clock(),
        )
        return self._issuer

    async def _key_set(self, kid: str | None) -> Any:
        async with self._lock:
            now = self.clock()
            stale = now - self._keys.fetched > self.settings.jwks_cache_seconds
            unknown = kid is not None and kid not in self._keys.kids
            may_refresh = now - self._keys.fetched >= self.settings.jwks_min_refresh_seconds
            if self._keys.keys is None or stale or (unknown and may_refresh):
                await self._fetch_keys()
            if self._keys.keys is None:
                raise TokenRefused("the issuer's keys could not be read")
            if kid is not None and kid not in self._keys.kids:
                raise TokenRefused("token signed by an unknown key")
            return self._keys.keys

    async def _fetch_keys(self) -> None:
        import httpx
        from joserfc.jwk import KeySet

        info = await self._issuer_info()
        if info.jwks_uri is None:
            raise TokenRefused("the issuer publishes no jwks_uri")
        try:
            async with httpx.AsyncClient(timeout=METADATA_TIMEOUT, trust_env=False) as client:
                answer = await client.get(info.jwks_uri, headers={"Accept": "application/json"})
            data = answer.json()
            public = [key for key in data.get("keys", []) if isinstance(key, dict) and key.get("kty") != "oct"]
            keys = KeySet.import_key_set({"keys": [_public_only(key) for key in public]})
        except Exception as exc:  # any failure leaves the old keys in place
            logger.warning("the issuer's JWKS could not be read: %s", type(exc).__name__)
            self._keys.fetched = self.clock()
            return
        self._keys = KeyCache(keys=keys, kids={str(k["kid"]) for k in public if "kid" in k}, fetched=self.clock())


def metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 and OpenID discovery locations, path-inserted first, then appended."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    base = f"{parts.scheme}://{parts.netloc}"
    return [
        f"{base}/.well-known/oauth-authorization-server{path}",
        f"{base}/.well-known/openid-configuration{path}",
        f"{base}{path}/.well-known/openid-configuration",
    ]


def _https_or_loopback(url: Any) -> str | None:
    from mcp_tools.util.net import is_loopback

    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname)):
        return url
    return None


PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k", "oth")


def _public_only(key: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in key.items() if name not in PRIVATE_MEMBERS}


def _peek_header(token: str) -> dict[str, Any]:
    encoded = token.split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, UnicodeDecodeError):
        raise TokenRefused("malformed token header") from None
    if not isinstance(header, dict):
        raise TokenRefused("malformed token header")
    return header


def _scopes_of(claims: dict[str, Any]) -> list[str]:
    value = claims.get("scope", claims.get("scp", ""))
    if isinstance(value, list):
        return [str(scope) for scope in value]
    return str(value).split()
