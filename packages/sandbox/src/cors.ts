/**
 * CORS for browser integrations: a single-page app calls the token, revocation and API endpoints
 * from its own origin with fetch. The sandbox allows exactly the origins of the registered
 * clients' redirect URIs, never `*`, and never on the browser-navigated authorize and consent
 * pages. The service description does not show a CORS policy; this is the sandbox's.
 *
 * Both halves are synchronous functions that the sandbox's front door calls around its routes.
 *
 * @module
 */
import type { ClientRegistry } from "./clients.js";
import { ACTOR_HEADER } from "./ledger.js";

// The actor header: a test names who sent a request (a browser tab among its actors) for the ledger.
const ALLOW_HEADERS = `Authorization, Content-Type, Accept, ${ACTOR_HEADER}`;
const EXPOSE_HEADERS = "WWW-Authenticate, Retry-After";

/** Whether CORS applies to a path: the token and revocation endpoints and the API. */
export function corsPath(path: string): boolean {
  return path === "/oauth/token" || path === "/oauth/revoke" || path === "/api/v1" || path.startsWith("/api/v1/");
}

/** The CORS policy of one sandbox. */
export interface Cors {
  /**
   * The answer to a CORS preflight (204 for an allowed origin, 403 otherwise), or `undefined` when
   * the request is not a preflight.
   */
  preflight(request: Request): Response | undefined;
  /**
   * The origin to mark the answer readable by (the request's, when a client registered it), or
   * `undefined`. Requests without an `Origin`, or from an origin no client registered, get
   * nothing, so the browser blocks them.
   */
  allowedOrigin(request: Request): string | undefined;
  /** Marks `response` readable by `origin` and returns it. */
  allow(response: Response, origin: string): Response;
}

/**
 * The CORS policy of the registered clients.
 *
 * @example
 * const policy = cors(clients);
 * const preflight = policy.preflight(request);
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
export function cors(clients: ClientRegistry): Cors {
  // `Origin: null` (sandboxed frames, file: pages, redirects across origins) is never allowed: see allowsOrigin.
  const allowedOrigin = (request: Request): string | undefined => {
    const origin = request.headers.get("origin");
    return origin !== null && clients.allowsOrigin(origin) ? origin : undefined;
  };
  return {
    allowedOrigin,
    preflight(request) {
      if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")) return undefined;
      const origin = allowedOrigin(request);
      if (origin === undefined) return new Response(null, { status: 403, headers: { Vary: "Origin" } });
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
    },
    allow(response, origin) {
      response.headers.set("Access-Control-Allow-Origin", origin);
      response.headers.set("Access-Control-Expose-Headers", EXPOSE_HEADERS);
      response.headers.append("Vary", "Origin");
      return response;
    },
  };
}
