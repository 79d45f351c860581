/**
 * A one-shot loopback HTTP server that receives the authorization callback of a command-line tool.
 *
 * @see RFC 8252 §7.3 (loopback redirect), §8.3 (loopback interface)
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fail, TokenManagerError } from "../errors.js";
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
}

/**
 * Listens on the host and port of a loopback `redirectUri` (such as `http://127.0.0.1:53682/callback`)
 * and resolves `callback` with the first GET to its path. Other paths get 404. The server closes
 * after the callback, on `close()`, or after the timeout. With port 0 the system picks a free port,
 * and `redirectUri` tells which; register a fixed port with a real tenant, since it compares the
 * redirect URI exactly (RFC 6749 §3.1.2.2 as the contract applies it).
 *
 * @throws {@link TokenManagerError} (rejects) with code `INVALID_OPTIONS` when `redirectUri` is not http
 * to a loopback address with a port. `callback` rejects with a {@link TokenManagerError} whose code is
 * `INVALID_CALLBACK` on timeout or close.
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
export async function waitForCallback(redirectUri: string | URL, options: WaitForCallbackOptions = {}): Promise<CallbackServer> {
  const target = new URL(String(redirectUri));
  if (target.protocol !== "http:" || !isLoopback(target.hostname) || !target.port) {
    fail("INVALID_OPTIONS", "redirectUri must be http://127.0.0.1:<port>/<path> (or localhost, [::1])");
  }
  const { timeoutMs = 300_000, message = "Signed in. You can close this window." } = options;
  let settle!: (url: string | Error) => void;
  const callback = new Promise<string>((resolve, reject) => {
    settle = (v) => (typeof v === "string" ? resolve(v) : reject(v));
  });
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
  const timer = setTimeout(() => stop(), timeoutMs);
  const stop = (): void => {
    clearTimeout(timer);
    settle(new TokenManagerError("INVALID_CALLBACK", "INVALID_CALLBACK: no authorization callback arrived"));
    server.close();
    server.closeAllConnections();
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => {
      // Not listening (the port is taken): drop the wait timer too, or it keeps the process alive.
      clearTimeout(timer);
      reject(error);
    });
    server.listen(Number(target.port), target.hostname.replace(/^\[|\]$/g, ""), resolve);
  });
  const { port } = server.address() as AddressInfo;
  bound.port = String(port);
  // The URI as given when its port was used, so that it still matches the registered one exactly.
  return { callback, close: stop, redirectUri: String(port) === target.port ? String(redirectUri) : bound.href };
}
