"""OAuth 2.1 for `serve --http`: this server as a resource server of an authorization server.

`settings` is the `[http.oauth]` section; `resource` validates access tokens (JWT against the
issuer's JWKS, or RFC 7662 introspection), serves the Protected Resource Metadata (RFC 9728)
and answers 401/403 with the challenges MCP clients follow; `reach` maps scopes to tools.
joserfc and the network are touched only when a token arrives, never at import.
"""
