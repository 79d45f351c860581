/**
 * Authorization requests waiting for the user's decision on the consent page. The page carries
 * only an opaque id; the validated parameters stay on the server.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { randomToken } from "./crypto.js";

/** How long a consent page stays usable, in seconds. */
export const PENDING_LIFETIME_SECONDS = 10 * 60;
/** The most requests waiting at once; the oldest is dropped first. */
export const MAX_PENDING = 10_000;

/** A validated authorization request. */
export interface AuthorizationRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly state: string;
  readonly codeChallenge: string;
}

interface PendingRecord {
  readonly request: AuthorizationRequest;
  readonly expiresAt: number;
}

/** Holds authorization requests between the consent page and the decision. */
export class PendingRequests {
  readonly #clock: Clock;
  readonly #requests = new Map<string, PendingRecord>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Stores a request and returns its opaque id.
   *
   * @see RFC 6749 §4.1.1 (the server obtains the decision by means of its own)
   */
  add(request: AuthorizationRequest): string {
    const id = randomToken("req_", 24);
    this.#requests.set(id, { request, expiresAt: this.#clock.now() + PENDING_LIFETIME_SECONDS * 1000 });
    if (this.#requests.size > MAX_PENDING) {
      const oldest = this.#requests.keys().next();
      if (oldest.done !== true) this.#requests.delete(oldest.value);
    }
    return id;
  }

  /** Removes and returns a request that has not expired; single use. */
  take(id: string): AuthorizationRequest | undefined {
    const record = this.#requests.get(id);
    if (record === undefined) return undefined;
    this.#requests.delete(id);
    return this.#clock.now() < record.expiresAt ? record.request : undefined;
  }

  /** Number of requests waiting. */
  get size(): number {
    return this.#requests.size;
  }
}
