/**
 * A log of token-endpoint and revocation calls, so that tests can count refreshes and see why a
 * request failed. It never holds a token, code or verifier value.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { REFRESH_TOKEN_LIFETIME_SECONDS } from "./tokens.js";
import type { UserId } from "./users.js";

/** One call to `POST /oauth/token` or `POST /oauth/revoke`. */
export interface SandboxEvent {
  /** Increasing number, from 1, across clears. */
  readonly seq: number;
  /** Sandbox time of the call (ISO 8601), moved by the test clock. */
  readonly time: string;
  readonly endpoint: "token" | "revoke";
  /** The `grant_type` sent to the token endpoint (when a string), or null. */
  readonly grantType: string | null;
  /** The `client_id` sent (when a string, cut to 200 characters), or null. */
  readonly clientId: string | null;
  /**
   * The id of the user whose grant the call was about: the user who approved the code exchanged,
   * the grant of the refresh token presented or of the token revoked; null when the call named no
   * grant the sandbox knows (an unknown token, a malformed request, a code it refused).
   */
  readonly user: UserId | null;
  /** HTTP status of the answer. */
  readonly status: number;
  /** `ok`, or the RFC 6749 §5.2 error code of the answer. */
  readonly outcome: string;
  /** Why, in a few words: `refresh_token_reused`, `code_expired`, `family_revoked`, `unknown_token`… */
  readonly detail: string | null;
}

/** The information a route records; the log adds `seq` and `time`. */
export type SandboxEventInput = Omit<SandboxEvent, "seq" | "time">;

/** The most events kept; older ones are dropped first. */
export const MAX_EVENTS = 10_000;
/**
 * How long an event is kept, in seconds of sandbox time: 30 days, the longest any token an event
 * is about can live. Older events are dropped at the next sweep.
 */
export const EVENT_RETENTION_SECONDS = REFRESH_TOKEN_LIFETIME_SECONDS;

/** An in-memory, bounded event log. */
export class EventLog {
  readonly #clock: Clock;
  #events: SandboxEvent[] = [];
  #seq = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Appends an event.
   *
   * @example log.record({ endpoint: "token", grantType: "refresh_token", clientId: "demo", user: 42, status: 200, outcome: "ok", detail: null });
   * @see RFC 6749 §10.3 (tokens must stay confidential; none is recorded)
   */
  record(input: SandboxEventInput): SandboxEvent {
    this.#seq += 1;
    const event: SandboxEvent = Object.freeze({
      seq: this.#seq,
      time: new Date(this.#clock.now()).toISOString(),
      ...input,
      clientId: input.clientId === null ? null : input.clientId.slice(0, 200),
    });
    this.#events.push(event);
    if (this.#events.length > MAX_EVENTS) this.#events.splice(0, this.#events.length - MAX_EVENTS);
    return event;
  }

  /** A copy of the events, oldest first. */
  list(): SandboxEvent[] {
    return [...this.#events];
  }

  /**
   * Drops the events older than {@link EVENT_RETENTION_SECONDS}. Events are appended in time order
   * and the clock never goes back, so the old ones are at the front.
   */
  sweep(): void {
    const cutoff = this.#clock.now() - EVENT_RETENTION_SECONDS * 1000;
    let old = 0;
    while (old < this.#events.length && Date.parse(this.#events[old]?.time ?? "") < cutoff) old += 1;
    if (old > 0) this.#events.splice(0, old);
  }

  /** Removes every event; returns how many there were. */
  clear(): number {
    const count = this.#events.length;
    this.#events = [];
    return count;
  }
}
