/**
 * The requests to the tenant's OAuth endpoints, as request/process pairs (oauth4webapi's shape): pure
 * builders of the code exchange, the refresh and the revocation, one function that sends a request
 * and classifies the answer, and the processing of a token response into a token record. The same
 * module as the Python kit's `_token_request.py`.
 *
 * @see RFC 6749 §4.1.3 (code exchange), §5.1, §5.2, §6 (refresh); RFC 7636 §4.5; RFC 7009 §2.1
 */
import { OAuthResponseError, type OAuthErrorFields, fail, TransientError } from "./errors.js";
import type { ManagerState, Secrets } from "./manager-state.js";
import { parseRetryAfter } from "./retry-after.js";
import { sanitize, scrub } from "./redact.js";
import { runningTimeout } from "./running-time.js";
import { newRecord, type TokenRecord } from "./token-record.js";
import { parseOAuthError, parseTokenResponse } from "./token-response.js";

/** A request to one of the tenant's OAuth endpoints. */
export interface EndpointRequest {
  readonly path: "/oauth/token" | "/oauth/revoke";
  readonly contentType: "application/json" | "application/x-www-form-urlencoded";
  readonly body: string;
}

/** The code exchange (RFC 6749 §4.1.3, with the PKCE verifier of RFC 7636 §4.5). */
export const authorizationCodeGrantRequest = (
  clientId: string,
  redirectUri: string,
  code: string,
  verifier: string,
): EndpointRequest => ({
  path: "/oauth/token",
  contentType: "application/json",
  body: JSON.stringify({
    grant_type: "authorization_code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code,
    code_verifier: verifier,
  }),
});

/** The refresh (RFC 6749 §6). */
export const refreshTokenGrantRequest = (clientId: string, refreshToken: string): EndpointRequest => ({
  path: "/oauth/token",
  contentType: "application/json",
  body: JSON.stringify({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }),
});

/** The revocation of an access token (RFC 7009 §2.1: a form body). */
export const revocationRequest = (clientId: string, token: string): EndpointRequest => ({
  path: "/oauth/revoke",
  contentType: "application/x-www-form-urlencoded",
  body: String(new URLSearchParams({ token, token_type_hint: "access_token", client_id: clientId })),
});

/** Error codes of a connection that was never made: the request did not leave this machine. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Whether a fetch failure says (in it or its causes) that no connection was made. */
function neverSent(e: unknown): boolean {
  for (
    let c = e as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    c && depth < 5;
    c = c.cause as typeof c, depth++
  ) {
    if (typeof c.code === "string" && NOT_SENT.has(c.code)) return true;
  }
  return false;
}

/** The failures (by identity) of requests that never left. */
const unsent = new WeakSet<object>();

/**
 * Whether a failed token request may be sent again (spec/token-store/README.md, step 6): it cannot
 * have reached the tenant (no connection was made), or it was answered 503 ("unable to handle the
 * request", RFC 9110 §15.6.4) or 429. For 429 that the token is unused is the kit's assumption (RFC
 * 6585 §4 does not say; the README's "Paused processes and retries" gives the reasoning). Any other
 * failure may have rotated the refresh token.
 */
export const mayRetry = (e: unknown): boolean =>
  e instanceof TransientError && (unsent.has(e) || e.status === 429 || e.status === 503);

/**
 * What an answer means: the text of a 2xx; otherwise a `TransientError` (429, 5xx, with its
 * Retry-After for 429 and 503), an `OAuthResponseError` (an RFC 6749 §5.2 error body, scrubbed of
 * `secrets`: a server may echo what it was sent), or `INVALID_RESPONSE`.
 */
export function processResponse(
  response: Response,
  text: string,
  secrets: Secrets,
  now: number,
  attempt: number,
): string {
  const { status } = response;
  if (response.ok) return text;
  if (status === 429 || status >= 500) {
    const retryAfterMs =
      status === 429 || status === 503 ? parseRetryAfter(response.headers.get("retry-after"), now) : undefined;
    throw new TransientError(status, attempt, undefined, retryAfterMs);
  }
  const fields = status >= 400 ? parseOAuthError(text) : undefined;
  if (!fields) return fail("INVALID_RESPONSE", "HTTP " + status);
  const scrubbed: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields)) scrubbed[name] = scrub(value, secrets);
  throw new OAuthResponseError(status, scrubbed as unknown as OAuthErrorFields);
}

/**
 * Resolves on the event loop's next turn, after the I/O that was waiting has been read: by
 * `setImmediate` where the runtime has it (Node, Bun, Deno), which runs right after that I/O.
 */
const nextTurn = (): Promise<void> =>
  new Promise((resolve) => (typeof setImmediate === "function" ? setImmediate(resolve) : setTimeout(resolve, 0)));

/**
 * Sends one request to the tenant and returns the text of a 2xx answer (see {@link processResponse}
 * for the rest). A failure with no answer is a `TransientError`, remembered as never sent when no
 * connection was made. One log line per request.
 */
export async function send(
  state: ManagerState,
  request: EndpointRequest,
  secrets: Secrets,
  attempt = 1,
): Promise<string> {
  // One turn of the event loop first (issue 27): a process woken from a stop (SIGSTOP, a suspended
  // machine) inside a timer lets its HTTP stack read that the tenant closed an idle keep-alive
  // connection meanwhile. Else Node's fetch writes the request on that connection and fails with
  // "other side closed": the same failure as a tenant that read the request and closed without an
  // answer, so it is never retried (step 6). A stop between here and the socket's choice inside
  // `fetch` (an app's own fetch wrapper) is out of the kit's reach.
  await nextTurn();
  let response: Response;
  let text: string;
  const started = performance.now();
  const controller = new AbortController();
  const stopTimer = runningTimeout(controller, state.requestTimeoutMs);
  /** The one line per request: with its status, or no answer. */
  const logRequest = (status?: number) =>
    state.log?.(status ? "answered" : "no-answer", {
      method: "POST",
      path: request.path,
      status,
      durationMs: Math.round(performance.now() - started),
      attempt,
    });
  try {
    // The global fetch is looked up at call time, and called without a receiver.
    response = await (state.fetch ?? fetch)(state.base + request.path, {
      method: "POST",
      headers: { Accept: "application/json", "Content-Type": request.contentType },
      body: request.body,
      // The token must never follow a redirect to another origin.
      redirect: "manual",
      signal: controller.signal,
    });
    text = await response.text();
  } catch (e) {
    logRequest();
    const error = new TransientError(undefined, attempt, sanitize(e, secrets));
    if (neverSent(e)) unsent.add(error);
    throw error;
  } finally {
    stopTimer();
  }
  logRequest(response.status);
  return processResponse(response, text, secrets, state.now(), attempt);
}

/**
 * A token response as a new token record: expiry counts from the local receive time (so a skewed
 * server clock does not matter), and a refresh that did not rotate keeps the refresh token it was
 * made with. `from` is the record a refresh starts from (none for the code exchange).
 *
 * @throws a `TokenManagerError` `INVALID_RESPONSE` when the text is not a token response.
 */
export const processTokenResponse = (text: string, receivedAt: number, from?: TokenRecord): TokenRecord =>
  newRecord(parseTokenResponse(text, from?.refresh_token), receivedAt, from);

/** Sends a token request and processes its answer into a new token record. */
export async function requestTokens(
  state: ManagerState,
  request: EndpointRequest,
  secrets: Secrets,
  from?: TokenRecord,
  attempt?: number,
): Promise<TokenRecord> {
  const text = await send(state, request, secrets, attempt);
  return processTokenResponse(text, state.now(), from);
}
