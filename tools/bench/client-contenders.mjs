// The contenders of client-overhead.mjs, set up: one call each of the TypeScript client and of
// openapi-fetch, against a stub fetch or a server. overhead-worker.mjs runs one of them per worker
// thread for the paired rounds; client-profile.mjs runs one under V8's CPU profiler.
//
// Fair setups (tools/bench/README.md, "Fair baselines"): the kit as its README shows it, the token
// manager as `auth` with its default clock and storage, signed in once before the clock starts (its
// token endpoint is a stub: the sign-in is not measured); openapi-fetch as its README shows it, the
// bearer header set once on the client (`createClient({ headers })`), not merged into every call.
import createClient from "openapi-fetch";
import { createTenantClient, staticToken, timeoutAfter } from "@tenant-integration/client";
import { createTokenManager } from "@tenant-integration/token-manager";

export const TOKEN = "at_bench_token";
const BODY = JSON.stringify({ id: 42, name: "Ada Lovelace", email: "ada@example.org" });
// a 1 KB JSON body for the POST contenders
const TICKET = { subject: "Printer on fire", detail: "x".repeat(960) };
const HEADERS = { Authorization: `Bearer ${TOKEN}` };
const REDIRECT = "http://127.0.0.1:53682/callback";

/** The in-process tenant: a fetch answering every request with a 3-field user JSON. */
export const stubFetch = async () =>
  new Response(BODY, { status: 200, headers: { "content-type": "application/json" } });

/** The token manager of the tenant at `url` as the client's README shows it (default clock and storage), signed in. */
async function signedInManager(url) {
  const tokenEndpoint = async () =>
    new Response(
      JSON.stringify({ access_token: TOKEN, refresh_token: "rt_bench", token_type: "Bearer", expires_in: 900 }),
      {
        status: 200,
        headers: { "content-type": "application/json" },
      },
    );
  const manager = createTokenManager({
    baseUrl: url,
    clientId: "bench",
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    fetch: tokenEndpoint,
  });
  const { url: authorizeUrl } = await manager.beginAuthorization();
  const state = new URL(authorizeUrl).searchParams.get("state");
  await manager.completeAuthorization(`${REDIRECT}?code=bench&state=${state}`);
  return manager;
}

/**
 * The contender `name`, set up (only it) for the tenant at `url` with `fetchImpl`: a function making
 * one call, or `undefined` for an unknown name.
 */
export async function contenderFor(name, url, fetchImpl) {
  const bareClient = () => createClient({ baseUrl: url, fetch: fetchImpl, headers: HEADERS });
  const tenantClient = async (options = {}) =>
    createTenantClient({ baseUrl: url, auth: await signedInManager(url), fetch: fetchImpl, ...options });
  switch (name) {
    case "raw":
      return async () => {
        const response = await fetchImpl(new Request(`${url}/api/v1/auth/user`, { headers: HEADERS }));
        await response.json();
      };
    // the same contender twice (A/A): what the method reports for no difference at all
    case "bare":
    case "bareAgain": {
      const client = bareClient();
      return () => client.GET("/api/v1/auth/user");
    }
    // the same client, the header set per request by a middleware instead of once: what openapi-fetch's
    // middleware mechanism costs by itself, before anything the kit's own middleware does
    case "bareMiddleware": {
      const client = createClient({ baseUrl: url, fetch: fetchImpl });
      client.use({
        onRequest({ request }) {
          request.headers.set("Authorization", HEADERS.Authorization);
          return request;
        },
      });
      return () => client.GET("/api/v1/auth/user");
    }
    // the same client plus what a timeout costs by itself: a timer and a signal per call
    case "bareTimeout": {
      const client = bareClient();
      return () => client.GET("/api/v1/auth/user", { signal: AbortSignal.timeout(30_000) });
    }
    case "barePost": {
      const client = bareClient();
      return () => client.POST("/api/v1/tickets", { body: TICKET });
    }
    case "tenant": {
      const client = await tenantClient();
      return () => client.GET("/api/v1/auth/user");
    }
    // a token from elsewhere: what the client costs without the token manager
    case "tenantStatic": {
      const client = createTenantClient({ baseUrl: url, auth: staticToken(TOKEN), fetch: fetchImpl });
      return () => client.GET("/api/v1/auth/user");
    }
    case "tenantTimeout": {
      const client = await tenantClient({ timeout: timeoutAfter(30_000) });
      return () => client.GET("/api/v1/auth/user");
    }
    case "tenantPost": {
      const client = await tenantClient();
      return () => client.POST("/api/v1/tickets", { body: TICKET });
    }
    default:
      return undefined;
  }
}
