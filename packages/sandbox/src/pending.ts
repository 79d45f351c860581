/**
 * Authorization requests waiting for the user's decision on the consent page. The page carries
 * only an opaque id; the validated parameters stay on the server.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { randomToken } from "./crypto.js";
import type { UserId } from "./users.js";

/** How long a consent page stays usable, in seconds. */
export const PENDING_LIFETIME_SECONDS = 10 * 60;
/** The most requests waiting at once, across all clients. */
export const MAX_PENDING = 10_000;
/** The most requests waiting at once for one client. */
export const MAX_PENDING_PER_CLIENT = 1_000;

/** A validated authorization request. */
export interface AuthorizationRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly state: string;
  readonly codeChallenge: string;
  /** The user chosen so far: the `sandbox_user` parameter's, or the default; the consent page may choose another. */
  readonly user: UserId;
}

interface PendingRecord {
  readonly request: AuthorizationRequest;
  readonly expiresAt: number;
}

/**
 * Holds authorization requests between the consent page and the decision.
 *
 * Anyone can create a pending request (the authorize endpoint is unauthenticated and client ids
 * are public), so a full store refuses new requests instead of dropping old ones: a flood can
 * delay new sign-ins of the flooded client for at most {@link PENDING_LIFETIME_SECONDS}, but never
 * cancel a consent page a user already has open. The per-client bound keeps a flood against one
 * client from refusing the sign-ins of the others.
 */
export class PendingRequests {
  readonly #clock: Clock;
  readonly #requests = new Map<string, PendingRecord>();
  readonly #perClient = new Map<string, number>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Stores a request and returns its opaque id, or undefined when the client already has
   * {@link MAX_PENDING_PER_CLIENT} requests waiting, or the store {@link MAX_PENDING}.
   *
   * @see RFC 6749 §4.1.1 (the server obtains the decision by means of its own), §4.1.2.1 (temporarily_unavailable)
   */
  add(request: AuthorizationRequest): string | undefined {
    if (this.#isFull(request.clientId)) {
      this.sweep();
      if (this.#isFull(request.clientId)) return undefined;
    }
    const id = randomToken("req_", 24);
    this.#requests.set(id, { request, expiresAt: this.#clock.now() + PENDING_LIFETIME_SECONDS * 1000 });
    this.#perClient.set(request.clientId, (this.#perClient.get(request.clientId) ?? 0) + 1);
    return id;
  }

  /** Removes and returns a request that has not expired; single use. */
  take(id: string): AuthorizationRequest | undefined {
    const record = this.#requests.get(id);
    if (record === undefined) return undefined;
    this.#remove(id, record);
    return this.#clock.now() < record.expiresAt ? record.request : undefined;
  }

  /**
   * Evicts the requests whose consent page expired. They are held in insertion order, all live
   * equally long and the clock never goes back, so the expired ones come first.
   */
  sweep(): void {
    const now = this.#clock.now();
    for (const [id, record] of this.#requests) {
      if (now < record.expiresAt) break;
      this.#remove(id, record);
    }
  }

  /** Number of requests waiting. */
  get size(): number {
    return this.#requests.size;
  }

  #isFull(clientId: string): boolean {
    return this.#requests.size >= MAX_PENDING || (this.#perClient.get(clientId) ?? 0) >= MAX_PENDING_PER_CLIENT;
  }

  #remove(id: string, record: PendingRecord): void {
    this.#requests.delete(id);
    const left = (this.#perClient.get(record.request.clientId) ?? 1) - 1;
    if (left <= 0) this.#perClient.delete(record.request.clientId);
    else this.#perClient.set(record.request.clientId, left);
  }
}
