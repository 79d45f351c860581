/**
 * `startSandbox`: serves a sandbox over HTTP on Node with `@hono/node-server`, optionally with a
 * state file that keeps its tenant across restarts.
 *
 * @module
 */
import { serve } from "@hono/node-server";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { buildSandbox, type Sandbox, type SandboxOptions } from "./app.js";
import { hostsOfListenAddress } from "./hosts.js";
import { readStateFile, StateFileWriter } from "./tenant-state-file.js";

/** Options of {@link startSandbox}: the sandbox's own, plus where to listen. */
export interface StartOptions extends SandboxOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on (default `127.0.0.1`, loopback only). Also added to `allowedHosts`, unless a wildcard (`0.0.0.0`, `::`). */
  readonly host?: string;
  /**
   * Let `@hono/node-server` replace the process's global `Request` and `Response` with its faster
   * ones (about 1.5× the requests per second). Off by default: with it, a fetch `Response` made
   * elsewhere in the same process (an integrator's test client) is no longer `instanceof Response`.
   * The `tenant-sandbox` CLI turns it on, since nothing else runs in its process.
   */
  readonly fastGlobals?: boolean;
  /**
   * A JSON file that keeps the clients, codes, tokens (with their families) and the test clock
   * across restarts: read at start (a missing file is a first start), written atomically with mode
   * 0600 after changes (coalesced, at most about every 100 ms) and on `close()`. It holds live
   * tokens: keep it private. One sandbox per file.
   */
  readonly stateFile?: string;
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
  /**
   * Stops listening, closes open connections, and writes the state file (when there is one).
   *
   * @throws StateFileError (rejects) when the last write of the state file fails.
   */
  close(): Promise<void>;
}

/**
 * Creates a sandbox and serves it. Resolves once the port is bound.
 *
 * @throws Error (rejects) when the port cannot be bound, e.g. `EADDRINUSE`.
 * @throws StateFileError (rejects) when the state file cannot be read, is not a sandbox state
 *   (it is left untouched), or cannot be written.
 * @throws HostConfigError (rejects) when `allowedHosts` holds something other than a host name.
 * @example
 * const running = await startSandbox({ port: 0, autoApprove: true, testClock: true,
 *   clients: [{ id: "demo", redirectUris: ["http://127.0.0.1:8080/callback"] }] });
 * console.log(running.url);
 * await running.close();
 * @see RFC 8252 §7.3 (loopback redirects: a local tenant on 127.0.0.1)
 */
export async function startSandbox(options: StartOptions = {}): Promise<RunningSandbox> {
  const host = options.host ?? "127.0.0.1";
  const sandboxOptions: SandboxOptions = {
    ...options,
    allowedHosts: [...(options.allowedHosts ?? []), ...hostsOfListenAddress(host)],
  };
  let writer: StateFileWriter | undefined;
  let sandbox: Sandbox;
  if (options.stateFile === undefined) {
    sandbox = buildSandbox(sandboxOptions).sandbox;
  } else {
    const restore = await readStateFile(options.stateFile);
    const built = buildSandbox(sandboxOptions, {
      ...(restore === undefined ? {} : { restore }),
      onChange: () => writer?.schedule(),
    });
    sandbox = built.sandbox;
    writer = new StateFileWriter(options.stateFile, built.snapshot, (error) => options.onError?.(error));
    // Write once before listening: a file that cannot be written stops the start, not a later request.
    await writer.flush();
  }
  return new Promise((resolve, reject) => {
    // Unless asked, keep the process's own Request and Response (see `fastGlobals`).
    // The app itself, typed as node-server's handler: it receives node-server's bindings as `env`.
    const server = serve({
      fetch: sandbox.app.fetch,
      port: options.port ?? 0,
      hostname: host,
      overrideGlobalObjects: options.fastGlobals === true,
    }) as Server;
    const onError = (error: Error): void => {
      server.close();
      sandbox.close();
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
        close: async () => {
          await new Promise<void>((done, fail) => {
            server.close((error) => (error === undefined ? done() : fail(error)));
            server.closeAllConnections();
          });
          sandbox.close();
          await writer?.close();
        },
      });
    });
  });
}
