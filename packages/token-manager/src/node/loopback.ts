/**
 * A one-shot loopback HTTP server that receives the authorization callback of a command-line tool.
 *
 * @see RFC 8252 §7.3 (loopback redirect), §8.3 (loopback interface)
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fail, TokenManagerError } from "../errors.js";
import type { FetchLike } from "../fetch.js";
import { isLoopback } from "../options.js";

/** Options of {@link waitForCallback}. */
export interface WaitForCallbackOptions {
  /** Give up after this many milliseconds (default 300 000). */
  timeoutMs?: number;
  /** The text shown in the browser after the callback (default "Signed in. You can close this window."). */
  message?: string;
}

/** A listening callback server. */
export interface CallbackServer {
  /**
   * The redirect URI the server listens on: the one given, character for character, or with the port
   * the system chose when it asked for port 0. Use it as the manager's `redirectUri`. The tenant
   * compares redirect URIs exactly, so a real tenant needs the registered, fixed port; port 0 suits
   * tests against a sandbox whose client is registered after the server listens.
   */
  readonly redirectUri: string;
  /** Resolves with the full callback URL (pass it to `completeAuthorization`), then the server closes. */
  readonly callback: Promise<string>;
  /** Stops listening; `callback` then rejects if it has not resolved. */
  close(): void;
  /**
   * Asks the tenant, before the browser goes there, whether it would send the browser back to this
   * server: a GET of the authorize endpoint with only the request's `client_id` and `redirect_uri`
   * (no state, no challenge: nothing can be approved). The kit assumes, from RFC 6749 §4.1.2.1 (the
   * service description does not show the answer), that the server checks those two before it
   * redirects anywhere and shows an error page instead of redirecting when either is not
   * registered; any other fault of a request is redirected back. So a 4xx page
   * means the redirect URI (or the client id) is not registered: the method rejects with
   * `REDIRECT_URI_REFUSED` and `callback` rejects with the same error, rather than waiting for a
   * callback that cannot come. A redirect to this URI resolves; anything else (a login page, an
   * unreachable tenant) tells nothing and resolves too.
   *
   * @throws {@link TokenManagerError} `REDIRECT_URI_REFUSED` (rejects), with the HTTP `status`.
   * @example
   * ```ts
   * const { url } = await tm.beginAuthorization();
   * await server.checkRedirect(url); // fails at once when the tenant does not know this redirect URI
   * console.log("Open this URL to sign in:", url);
   * ```
   * @see RFC 6749 §3.1.2.4, §4.1.2.1
   */
  checkRedirect(authorizeUrl: string | URL, options?: { fetch?: FetchLike }): Promise<void>;
}

/**
 * Listens on the host and port of a loopback `redirectUri` (such as `http://127.0.0.1:53682/callback`)
 * and resolves `callback` with the first GET to its path. Other paths get 404. The server closes
 * after the callback, on `close()`, or after the timeout. With port 0 the system picks a free port,
 * and `redirectUri` tells which; register a fixed port with a real tenant, since it compares the
 * redirect URI exactly (RFC 6749 §3.1.2.2 as the contract applies it).
 *
 * @throws {@link TokenManagerError} (rejects) with code `INVALID_OPTIONS` when `redirectUri` is not http
 * to a loopback address with a port, `CALLBACK_PORT_IN_USE` (with `port`) when another program
 * listens on its port. `callback` rejects with a {@link TokenManagerError} whose code is
 * `CALLBACK_TIMEOUT` on timeout (the message names the redirect URI and says what to check), and
 * `INVALID_CALLBACK` when closed first.
 * @example
 * ```ts
 * const server = await waitForCallback("http://127.0.0.1:53682/callback");
 * console.log("Open", (await tm.beginAuthorization()).url);
 * await tm.completeAuthorization(await server.callback);
 * ```
 * @example
 * ```ts
 * const server = await waitForCallback("http://127.0.0.1:0/callback"); // tests: any free port
 * sandbox.clients.register({ id: "cli", redirectUris: [server.redirectUri] });
 * ```
 * @see RFC 8252 §7.3, §8.3
 */
export async function waitForCallback(
  redirectUri: string | URL,
  options: WaitForCallbackOptions = {},
): Promise<CallbackServer> {
  const target = new URL(String(redirectUri));
  if (target.protocol !== "http:" || !isLoopback(target.hostname) || !target.port) {
    fail("INVALID_OPTIONS", "redirectUri must be http://127.0.0.1:<port>/<path> (or localhost, [::1])");
  }
  const { timeoutMs = 300_000, message = "Signed in. You can close this window." } = options;
  let settle!: (url: string | Error) => void;
  const callback = new Promise<string>((resolve, reject) => {
    settle = (v) => (typeof v === "string" ? resolve(v) : reject(v));
  });
  // A server closed (or timed out) with nobody awaiting `callback` must not crash the process with an
  // unhandled rejection; whoever awaits it still gets the rejection.
  callback.catch(() => {});
  // The redirect URI with the port actually bound (the system's choice for port 0), set once listening.
  const bound = new URL(target);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", bound.origin);
    if (req.method !== "GET" || url.pathname !== target.pathname) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" }).end(message);
    settle(url.href);
    stop();
  });
  const timer = setTimeout(
    () =>
      stop(
        new TokenManagerError(
          "CALLBACK_TIMEOUT",
          `CALLBACK_TIMEOUT: no authorization callback arrived at ${bound.href} within ${timeoutMs / 1000} s. ` +
            "If the browser showed the tenant's error page instead, this redirect URI is not registered for the client " +
            "exactly as written (scheme, host, port and path): register it, or use the registered one",
        ),
      ),
    timeoutMs,
  );
  const stop = (
    reason = new TokenManagerError(
      "INVALID_CALLBACK",
      "INVALID_CALLBACK: closed before an authorization callback arrived",
    ),
  ): void => {
    clearTimeout(timer);
    settle(reason);
    server.close();
    server.closeAllConnections();
  };
  const host = target.hostname.replace(/^\[|\]$/g, "");
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      // Not listening: drop the wait timer too, or it keeps the process alive.
      clearTimeout(timer);
      if (error.code !== "EADDRINUSE") return reject(error);
      const port = Number(target.port);
      reject(
        new TokenManagerError(
          "CALLBACK_PORT_IN_USE",
          `CALLBACK_PORT_IN_USE: port ${port} of ${host} is in use by another program (an earlier sign-in still waiting?). ` +
            "The redirect URI's port is registered with the tenant: stop that program rather than choosing another port",
          error,
          { port },
        ),
      );
    });
    server.listen(Number(target.port), host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  bound.port = String(port);
  // The URI as given when its port was used, so that it still matches the registered one exactly.
  const listening = String(port) === target.port ? String(redirectUri) : bound.href;

  const checkRedirect = async (
    authorizeUrl: string | URL,
    { fetch: fetchFn = fetch }: { fetch?: FetchLike } = {},
  ): Promise<void> => {
    const asked = new URL(authorizeUrl);
    const clientId = asked.searchParams.get("client_id") ?? "";
    const probe = new URL(asked.origin + asked.pathname);
    probe.search = String(
      new URLSearchParams({ client_id: clientId, redirect_uri: asked.searchParams.get("redirect_uri") ?? "" }),
    );
    let status: number;
    try {
      status = (await fetchFn(probe.href, { redirect: "manual", headers: { Accept: "text/html" } })).status;
    } catch {
      return; // unreachable: nothing learnt, the wait goes on
    }
    // 404, 408 and 429 say nothing of the registration; a redirect, a login page or a 5xx neither.
    if (status < 400 || status > 499 || status === 404 || status === 408 || status === 429) return;
    const refused = new TokenManagerError(
      "REDIRECT_URI_REFUSED",
      `REDIRECT_URI_REFUSED: the tenant answered the authorize request with an error page (HTTP ${status}) instead of redirecting to ${asked.searchParams.get("redirect_uri")}: ` +
        `check that this redirect URI is registered for client ${clientId} exactly as written (scheme, host, port and path), and the client id`,
      undefined,
      { status },
    );
    stop(refused);
    throw refused;
  };
  return { callback, close: () => stop(), redirectUri: listening, checkRedirect };
}
