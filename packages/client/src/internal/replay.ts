/**
 * Internal: what the middleware of this package share to send a request again (after a 401, a 429
 * or 5xx, or a same-origin redirect) without going through openapi-fetch a second time.
 *
 * - Bodies are read once, before the first send, into an `ArrayBuffer` that can be replayed any
 *   number of times. They are keyed by openapi-fetch's per-call `options` object (checked against
 *   the call `id`), so every middleware of one call finds the same copy whichever `Request` object
 *   it holds, and nothing outlives the call. Requests without a body cost nothing.
 * - `followIntent` marks requests whose caller wanted redirects followed but that are sent with
 *   `redirect: "manual"` so that a bearer token never follows a redirect to another origin.
 *
 * Not exported from the package.
 */
import type { MiddlewareCallbackParams } from "openapi-fetch";
import { NetworkError } from "../errors.js";
import type { ApiScope } from "../api-scope.js";

interface StoredBody {
  readonly id: string;
  readonly body: ArrayBuffer;
}

const bodies = new WeakMap<object, StoredBody>();

/** Requests sent with `redirect: "manual"` on behalf of a caller who wanted `follow`. */
export const followIntent = new WeakSet<Request>();

/** Reads the request body once into a replayable buffer (no-op without a body or when done). */
export async function captureBody(params: MiddlewareCallbackParams): Promise<void> {
  const { request, options, id } = params;
  if (request.body === null) return;
  const stored = bodies.get(options);
  if (stored !== undefined && stored.id === id) return;
  bodies.set(options, { id, body: await request.clone().arrayBuffer() });
}

/** The captured body of this call, `null` for a request without one, `undefined` when unknown. */
export function storedBody(params: Pick<MiddlewareCallbackParams, "request" | "options" | "id">): ArrayBuffer | null | undefined {
  if (params.request.body === null) return null;
  const stored = bodies.get(params.options);
  return stored !== undefined && stored.id === params.id ? stored.body : undefined;
}

/** Builds a fresh copy of a (possibly already sent) request, with its body and new headers. */
export function rebuild(request: Request, body: ArrayBuffer | null, headers?: Headers): Request {
  const redirect = request.redirect === "error" ? "error" : "manual";
  return headers === undefined ? new Request(request, { body, redirect }) : new Request(request, { headers, body, redirect });
}

/** Authorization value of a request when it is `Bearer <token>` (scheme case-insensitive). */
export function bearerTokenOf(request: Request): string | undefined {
  const value = request.headers.get("authorization");
  if (value === null || value.length < 8 || value.slice(0, 7).toLowerCase() !== "bearer ") return undefined;
  return value.slice(7).trim();
}

/** Fetch as openapi-fetch passes it to middleware. */
export type FetchFn = (request: Request) => Promise<Response>;

/**
 * Sends a request that is in `redirect: "manual"` mode, wrapping a rejection in `NetworkError`
 * (with the token redacted), and follows redirects when the caller wanted that.
 */
export async function send(
  fetch: FetchFn,
  request: Request,
  body: ArrayBuffer | null,
  follow: boolean,
  scope: ApiScope | undefined,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(request);
  } catch (cause) {
    throw new NetworkError(request, cause, bearerTokenOf(request));
  }
  return follow ? followRedirects(fetch, request, response, body, scope) : response;
}

const MAX_REDIRECTS = 20;

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/**
 * Follows same-origin redirects of a request sent with `redirect: "manual"`, as fetch would
 * (RFC 9110 §15.4: 303, and 301/302 after POST, become a GET without body). A redirect to another
 * origin is not followed: its 3xx response is returned, so the `Authorization` header never leaves
 * the tenant. The header is kept on a hop only when the target is still under the API (`scope`).
 * An `opaqueredirect` (browsers) cannot be read and is returned as is.
 *
 * @see RFC 9110 §15.4 (redirection), RFC 6750 §5.2 (token redirect)
 */
export async function followRedirects(
  fetch: FetchFn,
  first: Request,
  firstResponse: Response,
  body: ArrayBuffer | null,
  scope: ApiScope | undefined,
): Promise<Response> {
  let request = first;
  let response = firstResponse;
  let currentBody = body;
  for (let hop = 0; hop < MAX_REDIRECTS && isRedirect(response.status); hop++) {
    const location = response.headers.get("location");
    if (location === null) return response;
    let target: URL;
    try {
      target = new URL(location, request.url);
    } catch {
      return response;
    }
    const from = new URL(request.url);
    if (target.origin !== from.origin) return response; // never carry the token to another origin
    const headers = new Headers(request.headers);
    let method = request.method;
    if (response.status === 303 ? method !== "GET" && method !== "HEAD" : (response.status === 301 || response.status === 302) && method === "POST") {
      method = "GET";
      currentBody = null;
      for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"]) headers.delete(name);
    }
    if (scope !== undefined && !scope.contains(target.href)) headers.delete("authorization");
    if ((method === "GET" || method === "HEAD") && currentBody !== null) currentBody = null;
    if (request.body !== null && currentBody === null && method !== "GET" && method !== "HEAD") return response; // body not replayable
    discard(response);
    request = new Request(target, { method, headers, body: currentBody, redirect: "manual", signal: request.signal });
    try {
      response = await fetch(request);
    } catch (cause) {
      throw new NetworkError(request, cause, bearerTokenOf(request));
    }
  }
  return response;
}

/**
 * Releases the body of a response that is being replaced. Not awaited: cancelling one branch of a
 * teed (cloned) body settles only when the other branch is consumed too.
 */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}
