"""An authorization server of its own, for the one person who runs this server.

Built on the SDK's authorization-server routes (`create_auth_routes`: metadata, authorize,
token, register, revoke), which check PKCE (S256 only), the redirect URI and the client; this
module is the `OAuthAuthorizationServerProvider` behind them. The person consents on the
approvals page, signed in as usual; codes are single use, refresh tokens rotate, and a refresh
token used again after its rotation revokes every token of that consent (it was stolen, or
its copy was). Everything lives in `OAuthStore`, hashed.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcp_tools.oauth.limits import MAX_URI, Limits, metadata_problem, stored
from mcp_tools.state.oauth import OAuthStore

OWNER = "owner"  # the one person an embedded server signs in
CODE_SECONDS = 300
CONSENT_SECONDS = 600
ACCESS_SECONDS = 3600
REFRESH_SECONDS = 30 * 24 * 3600
MAX_METADATA_DOCUMENT_BYTES = 5120
METADATA_DOCUMENT_SECONDS = 300  # how long a fetched Client ID Metadata Document is trusted
MAX_DOCUMENTS = 256  # Client ID Metadata Documents kept in memory; the oldest go first

Audit = Callable[[str, str, str, str], None]  # principal, tool, decision, outcome


class EmbeddedAuthorizationServer:
    def __init__(
        self,
        store: OAuthStore,
        issuer: str,
        resource: str,
        consent_url: str,
        scopes: list[str],
        audit: Audit,
        clock: Callable[[], float] = time.time,
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.limits = limits or Limits()
        self.issuer = issuer
        self.resource = resource
        self.consent_url = consent_url.rstrip("/")
        self.scopes = scopes
        self.audit = audit
        self.clock = clock
        self._documents: dict[str, tuple[float, OAuthClientInformationFull]] = {}

    # -- clients ---------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if len(client_id) > MAX_URI:  # no client has such an id: nothing to fetch or look up
            return None
        if client_id.startswith("https://"):
            return await self._metadata_document(client_id)
        info = self.store.get_client(client_id, self.limits.unconsented_client_seconds)
        return None if info is None else OAuthClientInformationFull.model_validate(info)

    def has_consented(self, client_id: str) -> bool:
        return self.store.has_consented(client_id)

    def redirect_uris_of(self, client_id: str) -> list[str]:
        """Every redirect URI the client may use, for the consent page."""
        document = self._documents.get(client_id)
        info = document[1].model_dump(mode="json") if document else self.store.get_client(client_id)
        return [str(uri) for uri in (info or {}).get("redirect_uris") or []]

    async def _metadata_document(self, url: str) -> OAuthClientInformationFull | None:
        """A Client ID Metadata Document: the client is the URL, described by what it serves there.

        Fetched like any outbound request (no private addresses, no redirects, small), except
        that an issuer on loopback (a test, a laptop) may fetch from loopback too.
        """
        cached = self._documents.get(url)
        if cached is not None and self.clock() - cached[0] < METADATA_DOCUMENT_SECONDS:
            return cached[1]
        import ipaddress
        import ssl
        from urllib.parse import urlsplit

        from mcp_tools.core.tooling import ToolFailure
        from mcp_tools.util.net import is_loopback
        from mcp_tools.util.outbound import OutboundPolicy, fetch

        parts = urlsplit(url)
        if not parts.hostname or parts.path in ("", "/") or parts.fragment or parts.username:
            self.audit(OWNER, "-", "oauth_refused", "client id URL is not a metadata document address")
            return None
        loopback = is_loopback(urlsplit(self.issuer).hostname)
        networks = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")) if loopback else ()
        policy = OutboundPolicy(allow_hosts=("*",), allow_networks=networks, allow_plain_http=False)
        try:
            answer = await fetch(
                method="GET",
                url=url,
                headers={"Accept": "application/json"},
                body=None,
                policy=policy,
                max_bytes=MAX_METADATA_DOCUMENT_BYTES,
                timeout=5,
                verify=ssl.create_default_context(),  # the system's trust store (and SSL_CERT_FILE)
            )
            document = json.loads(answer.body) if answer.status == 200 and not answer.truncated else None
        except (ToolFailure, ValueError) as exc:
            self.audit(OWNER, "-", "oauth_refused", f"client metadata document unreadable ({type(exc).__name__})")
            return None
        if not isinstance(document, dict) or document.get("client_id") != url:
            self.audit(OWNER, "-", "oauth_refused", "client metadata document does not name its own URL")
            return None
        method = document.get("token_endpoint_auth_method", "none")
        if method != "none" or "client_secret" in document:
            self.audit(OWNER, "-", "oauth_refused", "client metadata document asks for a shared secret")
            return None
        try:
            client = OAuthClientInformationFull.model_validate(
                {
                    "client_id": url,
                    "redirect_uris": document.get("redirect_uris"),
                    "client_name": document.get("client_name"),
                    "client_uri": document.get("client_uri"),
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "scope": document.get("scope"),
                }
            )
        except ValueError:
            self.audit(OWNER, "-", "oauth_refused", "client metadata document is not valid client metadata")
            return None
        problem = metadata_problem(client.model_dump(mode="json", exclude_none=True))
        if problem is not None:
            self.audit(OWNER, "-", "oauth_refused", f"client metadata document refused: {problem}")
            return None
        if client.scope is not None:  # it may ask only for the scopes this server offers
            client.scope = " ".join(scope for scope in client.scope.split() if scope in self.scopes) or None
        self._documents.pop(url, None)
        self._documents[url] = (self.clock(), client)
        while len(self._documents) > MAX_DOCUMENTS:
            self._documents.pop(next(iter(self._documents)))
        return client

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        from mcp.server.auth.provider import RegistrationError

        info = client_info.model_dump(mode="json", exclude_none=True)
        problem = metadata_problem(info)
        if problem is not None:
            error = "invalid_redirect_uri" if "redirect_uri" in problem else "invalid_client_metadata"
            raise RegistrationError(error, problem)  # type: ignore[arg-type]
        assert client_info.client_id is not None
        limits = self.limits
        try:
            evicted = self.store.add_client(
                client_info.client_id, stored(info), limits.max_clients, limits.unconsented_client_seconds
            )
        except LookupError:
            raise RegistrationError(
                "invalid_client_metadata",
                f"all {limits.max_clients} registered clients hold tokens; revoke one on the approvals page",
            ) from None
        if evicted:
            self.audit(OWNER, "-", "oauth_client_evicted", f"{evicted} unused registration(s) made room")

    def clients(self) -> list[tuple[str, str]]:
        """(client_id, name) of every client registered or holding tokens, for the approvals page."""
        found = []
        for client_id, info in self.store.clients_in_use():
            document = self._documents.get(client_id)
            name = (info or {}).get("client_name") or (document[1].client_name if document else None)
            found.append((client_id, str(name or "an unnamed client")))
        return found

    def revoke_client(self, client_id: str) -> None:
        """The person revoked it: its registration and every token it holds are gone."""
        self.store.forget_client(client_id)
        self._documents.pop(client_id, None)
        self.audit(OWNER, "-", "oauth_client_revoked", f"client {client_id[:200]}")

    # -- authorization: the person consents on the approvals page ----------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and params.resource != self.resource:
            raise AuthorizeError("invalid_request", f"this server issues tokens for {self.resource} only")
        request_id = secrets.token_urlsafe(24)
        scopes = params.scopes if params.scopes else list(self.scopes)
        self.store.put_request(
            request_id,
            {
                "client_id": client.client_id,
                "client_name": client.client_name,
                "state": params.state,
                "scopes": scopes,
                "code_challenge": params.code_challenge,
                "redirect_uri": str(params.redirect_uri),
                "redirect_uri_provided_explicitly": params.redirect_uri_provided_explicitly,
            },
            CONSENT_SECONDS,
            self.limits.max_pending_consents,
            self.limits.max_pending_consents_per_client,
        )
        return f"{self.consent_url}/{request_id}"

    def consent_request(self, request_id: str) -> dict[str, Any] | None:
        return self.store.get_request(request_id)

    def answer(self, request_id: str, allow: bool) -> str | None:
        """Where the browser goes next: back to the client with a code, or with access_denied."""
        request = self.store.take_request(request_id)
        if request is None:
            return None
        if not allow:
            self.audit(OWNER, "-", "oauth_consent_denied", f"client {request['client_id']}")
            return construct_redirect_uri(
                request["redirect_uri"], error="access_denied", state=request["state"], iss=self.issuer
            )
        self.store.mark_consented(request["client_id"])
        code = secrets.token_urlsafe(32)
        data = AuthorizationCode(
            code="",
            scopes=request["scopes"],
            expires_at=self.clock() + CODE_SECONDS,
            client_id=request["client_id"],
            code_challenge=request["code_challenge"],
            redirect_uri=request["redirect_uri"],
            redirect_uri_provided_explicitly=request["redirect_uri_provided_explicitly"],
            resource=self.resource,
            subject=OWNER,
        )
        family = uuid.uuid4().hex
        self.store.put_grant(code, "code", request["client_id"], family, data.model_dump(mode="json"), CODE_SECONDS)
        return construct_redirect_uri(request["redirect_uri"], code=code, state=request["state"], iss=self.issuer)

    # -- codes and tokens ----------------------------------------------------------------------------

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        found = self.store.get_grant(authorization_code, "code")
        if found is None:
            return None
        data, family, used = found
        if used:  # a replayed code: what it bought is revoked too (OAuth 2.1 §4.1.3)
            self.store.revoke_family(family)
            self.audit(OWNER, "-", "oauth_refused", f"authorization code replayed by client {client.client_id}")
            return None
        if data["client_id"] != client.client_id:
            self.audit(OWNER, "-", "oauth_refused", "authorization code presented by another client")
            return None
        return AuthorizationCode.model_validate({**data, "code": authorization_code})

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if not self.store.use_grant(authorization_code.code, "code"):
            self.audit(OWNER, "-", "oauth_refused", f"authorization code replayed by client {client.client_id}")
            raise TokenError("invalid_grant", "authorization code already used")
        family = self.store.family_of(authorization_code.code) or uuid.uuid4().hex
        return self._issue(client, authorization_code.scopes, family)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = self.store.get_grant(refresh_token, "refresh")
        if found is None:
            return None
        data, family, used = found
        if used:  # reused after rotation: whoever holds the family is not to be trusted
            self.store.revoke_family(family)
            self.audit(OWNER, "-", "oauth_refused", f"refresh token reused after rotation by client {client.client_id}")
            return None
        if data["client_id"] != client.client_id:
            self.audit(OWNER, "-", "oauth_refused", "refresh token presented by another client")
            return None
        return RefreshToken.model_validate({**data, "token": refresh_token})

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        family = self.store.family_of(refresh_token.token)
        if family is None or not self.store.use_grant(refresh_token.token, "refresh"):
            if family is not None:
                self.store.revoke_family(family)
            self.audit(OWNER, "-", "oauth_refused", f"refresh token reused after rotation by client {client.client_id}")
            raise TokenError("invalid_grant", "refresh token already used")
        if any(scope not in refresh_token.scopes for scope in scopes):
            raise TokenError("invalid_scope", "a refresh cannot widen the scopes")
        return self._issue(client, scopes or refresh_token.scopes, family)

    def _issue(self, client: OAuthClientInformationFull, scopes: list[str], family: str) -> OAuthToken:
        assert client.client_id is not None
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = self.clock()
        common = {"client_id": client.client_id, "scopes": scopes, "resource": self.resource, "subject": OWNER}
        self.store.put_grant(
            access,
            "access",
            client.client_id,
            family,
            {**common, "expires_at": int(now + ACCESS_SECONDS), "token": ""},
            ACCESS_SECONDS,
        )
        self.store.put_grant(
            refresh,
            "refresh",
            client.client_id,
            family,
            {**common, "expires_at": int(now + REFRESH_SECONDS), "token": ""},
            REFRESH_SECONDS,
        )
        return OAuthToken(access_token=access, expires_in=ACCESS_SECONDS, scope=" ".join(scopes), refresh_token=refresh)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.store.get_grant(token, "access")
        if found is None:
            return None
        data, _, _ = found
        return AccessToken.model_validate({**data, "token": token, "claims": {"iss": self.issuer}})

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        family = self.store.family_of(token.token)
        if family is not None:
            self.store.revoke_family(family)
