/** Options of {@link serveExampleWeb}. */
export interface ServeExampleWebOptions {
  /** TCP port (default 5173; 0 picks a free one, read `port` or `url` of the result). */
  port?: number;
  /** Interface to listen on (default `127.0.0.1`). The page's origin, and so its redirect URI, follows it. */
  host?: string;
  /** The tenant the served app signs in to; written into index.html. Default: the build's `VITE_TENANT_URL`, else `http://localhost:4020`. */
  tenantUrl?: string;
  /** The OAuth client id; written into index.html. Default: the build's `VITE_CLIENT_ID`, else `demo`. */
  clientId?: string;
  /** The built app (default: this package's `dist/`). */
  root?: string;
}

/** A running server. */
export interface ExampleWebServer {
  /** `http://<host>:<port>`; register `${url}/callback` as the client's redirect URI. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/**
 * Serves the built example web app (`dist/`): files as they are, `index.html` for every other path
 * (so `/callback` works), with `tenantUrl` and `clientId` written into it as
 * `<meta name="tenant-integration:tenant-url">` and `…:client-id`.
 *
 * @throws when `dist/index.html` is missing (build first) or the port cannot be bound.
 * @example
 * ```js
 * import { serveExampleWeb } from "@tenant-integration/example-web/serve";
 * const web = await serveExampleWeb({ port: 5173, tenantUrl: "http://127.0.0.1:4020", clientId: "demo" });
 * console.log(`${web.url}/callback`); // register this redirect URI
 * await web.close();
 * ```
 */
export function serveExampleWeb(options?: ServeExampleWebOptions): Promise<ExampleWebServer>;
