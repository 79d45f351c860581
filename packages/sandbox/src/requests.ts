/**
 * A log of the headers each request to the tenant's endpoints carried (`POST /oauth/token`,
 * `POST /oauth/revoke` and the API under `/api/v1`), so that a test can check, from the tenant's
 * side, what a kit sends on every call. Kept only with the test routes (`testClock`); it never holds
 * a token: an `Authorization` value is recorded as its scheme alone.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { actorOf } from "./ledger.js";
import { MAX_EVENTS } from "./events.js";

/** One request to a tenant endpoint, as the sandbox received it. */
export interface SandboxRequest {
  /** Increasing number, from 1, across clears. */
  readonly seq: number;
  /** Sandbox time of the request (ISO 8601), moved by the test clock. */
  readonly time: string;
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  /** Who sent it: the request's `Sandbox-Actor` header (see `actorOf`), or null. */
  readonly actor: string | null;
  /**
   * Every header the request carried, by lowercase name. Values are cut to 200 characters;
   * `authorization` keeps its scheme only (`Bearer`, `Basic`…), never the credentials, and
   * `cookie` is recorded as `(n bytes)`.
   */
  readonly headers: Readonly<Record<string, string>>;
}

/** The paths whose requests are logged: the endpoints a kit calls. */
const LOGGED = /^\/(?:oauth\/(?:token|revoke)|api\/v1(?:\/|$))/;
/** The longest header value kept. */
const MAX_VALUE = 200;

/** A header's value as the log keeps it: no credentials. */
function safeValue(name: string, value: string): string {
  if (name === "authorization") return value.trim().split(/\s+/, 1)[0] ?? "";
  if (name === "cookie") return `(${value.length} bytes)`;
  return value.slice(0, MAX_VALUE);
}

/** An in-memory, bounded log of the headers of requests to the tenant's endpoints. */
export class RequestLog {
  readonly #clock: Clock;
  #requests: SandboxRequest[] = [];
  #seq = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Records `request` when `path` is a tenant endpoint (the OAuth token and revocation endpoints,
   * the API); other paths (the authorization page, the test routes) are not recorded.
   *
   * @see RFC 6750 §2.1 (the bearer token is never recorded, only the scheme)
   */
  record(request: Request, path: string): void {
    if (!LOGGED.test(path)) return;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = safeValue(name, value);
    });
    this.#seq += 1;
    this.#requests.push(
      Object.freeze({
        seq: this.#seq,
        time: new Date(this.#clock.now()).toISOString(),
        method: request.method,
        path,
        actor: actorOf(request.headers),
        headers: Object.freeze(headers),
      }),
    );
    if (this.#requests.length > MAX_EVENTS) this.#requests.splice(0, this.#requests.length - MAX_EVENTS);
  }

  /** A copy of the requests, oldest first. */
  list(): SandboxRequest[] {
    return [...this.#requests];
  }

  /** Removes every request; returns how many there were. */
  clear(): number {
    const count = this.#requests.length;
    this.#requests = [];
    return count;
  }
}
