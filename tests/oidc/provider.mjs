// A real OpenID provider (oidc-provider) on 127.0.0.1 for tests/test_oauth.py.
// argv[2]: the node_modules directory holding oidc-provider. stdin: JSON
// {signing_key, scopes, clients, resources, loopback_mcp, port?, interactive?}. Prints {"issuer": ...} once it listens.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const { default: Provider, errors } = await import(pathToFileURL(join(process.argv[2], 'oidc-provider', 'lib', 'index.js')));
let input = '';
for await (const chunk of process.stdin) input += chunk;
const config = JSON.parse(input);

const server = createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: config.clients,
  jwks: { keys: [config.signing_key] },
  scopes: ['openid', 'offline_access', ...config.scopes],
  features: {
    // The provider's own login and consent forms (any login name signs in), and open registration:
    // what an MCP client meets at a real provider, driven by the test like a browser.
    devInteractions: { enabled: Boolean(config.interactive) },
    registration: { enabled: Boolean(config.interactive) },
    clientCredentials: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async () => true },
    revocation: { enabled: true, allowedPolicy: async () => true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        // Exact resources, else any MCP endpoint on 127.0.0.1 (each test server has its own port);
        // `localhost` ones get opaque tokens, for introspection.
        const loopback = /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource) ? config.loopback_mcp : undefined;
        const opaque = /^http:\/\/localhost:\d+\/mcp$/.test(resource) ? { ...config.loopback_mcp, format: 'opaque' } : undefined;
        const info = config.resources[resource] ?? loopback ?? opaque;
        if (!info) throw new errors.InvalidTarget();
        return {
          scope: info.scope,
          audience: resource,
          accessTokenTTL: info.ttl ?? 300,
          accessTokenFormat: info.format ?? 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});
// How often each token was introspected, for the tests of the resource server's cache:
// GET /test/introspections?token=... answers {"count": n}.
const introspections = new Map();
provider.use(async (ctx, next) => {
  if (ctx.path === '/test/introspections') {
    ctx.body = { count: introspections.get(ctx.query.token) ?? 0 };
    return;
  }
  await next();
  if (ctx.oidc?.route === 'introspection' && typeof ctx.oidc.params?.token === 'string') {
    introspections.set(ctx.oidc.params.token, (introspections.get(ctx.oidc.params.token) ?? 0) + 1);
  }
});
server.on('request', provider.callback());
process.stdout.write(JSON.stringify({ issuer }) + '\n');
