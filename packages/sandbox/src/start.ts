/**
 * `startSandbox`: serves a sandbox over HTTP on Node with `@hono/node-server`.
 *
 * @module
 */
import { serve } from "@hono/node-server";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createSandbox, type Sandbox, type SandboxOptions } from "./app.js";

/** Options of {@link startSandbox}: the sandbox's own, plus where to listen. */
export interface StartOptions extends SandboxOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on (default `127.0.0.1`, loopback only). */
  readonly host?: string;
  /**
   * Let `@hono/node-server` replace the process's global `Request` and `Response` with its faster
   * ones (about 1.5× the requests per second). Off by default: with it, a fetch `Response` made
   * elsewhere in the same process (an integrator's test client) is no longer `instanceof Response`.
   * The `tenant-sandbox` CLI turns it on, since nothing else runs in its process.
   */
  readonly fastGlobals?: boolean;
}

/** A listening sandbox. */
export interface RunningSandbox {
  /** Base URL, e.g. `http://127.0.0.1:4020` (no trailing slash). */
  readonly url: string;
  /** The port actually bound. */
  readonly port: number;
  /** The host it listens on. */
  readonly host: string;
  /** The sandbox behind the server, with its clock, clients and events. */
  readonly sandbox: Sandbox;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/**
 * Creates a sandbox and serves it. Resolves once the port is bound.
 *
 * @throws Error (rejects) when the port cannot be bound, e.g. `EADDRINUSE`.
 * @example
 * const running = await startSandbox({ port: 0, autoApprove: true, testClock: true,
 *   clients: [{ id: "demo", redirectUris: ["http://127.0.0.1:8080/callback"] }] });
 * console.log(running.url);
 * await running.close();
 * @see RFC 8252 §7.3 (loopback redirects: a local tenant on 127.0.0.1)
 */
export function startSandbox(options: StartOptions = {}): Promise<RunningSandbox> {
  const sandbox = createSandbox(options);
  const host = options.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    // Unless asked, keep the process's own Request and Response (see `fastGlobals`).
    // The app itself, typed as node-server's handler: it receives node-server's bindings as `env`.
    const server = serve({ fetch: sandbox.app.fetch, port: options.port ?? 0, hostname: host, overrideGlobalObjects: options.fastGlobals === true }) as Server;
    const onError = (error: Error): void => {
      server.close();
      reject(error);
    };
    server.once("error", onError);
    server.once("listening", () => {
      server.off("error", onError);
      const port = (server.address() as AddressInfo).port;
      const urlHost = host.includes(":") ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        port,
        host,
        sandbox,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error === undefined ? done() : fail(error)));
            server.closeAllConnections();
          }),
      });
    });
  });
}
