/**
 * CORS for browser integrations: a single-page app calls the token, revocation and API endpoints
 * from its own origin with fetch. The sandbox allows exactly the origins of the registered
 * clients' redirect URIs, never `*`, and never on the browser-navigated authorize and consent
 * pages. The service description does not show a CORS policy; this is the sandbox's.
 *
 * @module
 */
import type { Context, Next } from "hono";
import type { ClientRegistry } from "./clients.js";

const ALLOW_HEADERS = "Authorization, Content-Type, Accept";
const EXPOSE_HEADERS = "WWW-Authenticate, Retry-After";

/**
 * A Hono middleware that answers CORS preflights (204) and marks responses readable by an
 * allowed origin. Requests without an `Origin`, or from an origin no client registered, pass
 * through untouched, so the browser blocks them.
 *
 * @example app.use("/oauth/token", cors(clients));
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
export function cors(clients: ClientRegistry) {
  return async (c: Context, next: Next): Promise<Response | void> => {
    const origin = c.req.header("origin");
    // `Origin: null` (sandboxed frames, file: pages, redirects across origins) is never allowed: see allowsOrigin.
    const allowed = origin !== undefined && clients.allowsOrigin(origin);
    if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined) {
      if (!allowed) return new Response(null, { status: 403, headers: { Vary: "Origin" } });
      return new Response(null, {
        status: 204,
        headers: {
          "Access-Control-Allow-Origin": origin,
          "Access-Control-Allow-Methods": "GET, POST",
          "Access-Control-Allow-Headers": ALLOW_HEADERS,
          "Access-Control-Max-Age": "600",
          Vary: "Origin",
        },
      });
    }
    await next();
    if (allowed) {
      c.res.headers.set("Access-Control-Allow-Origin", origin);
      c.res.headers.set("Access-Control-Expose-Headers", EXPOSE_HEADERS);
      c.res.headers.append("Vary", "Origin");
    }
  };
}
