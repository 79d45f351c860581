/**
 * The refresh-token ledger: which refresh token was presented, when, by whom and with what outcome,
 * so that a test can check from the tenant's side that no refresh token was presented twice, which
 * presentation was caught as reuse, and whether the sign-in is still valid at the end.
 *
 * A token is named by its fingerprint (the SHA-256 of its UTF-8 bytes, lowercase hex), the same one
 * the token managers write into their refresh intent record (spec/token-store), never by its value.
 *
 * What counts as a presentation: every `refresh_token` grant whose body carried a `refresh_token`
 * string and reached the token route, whatever it was answered (refused for an unknown client or a
 * scope included). A request an injected fault answers (`status`) or hangs up on (`drop`) never
 * reaches the route and is not a presentation; a `slow` fault only delays it, so it is one. The
 * ledger is in memory only, like the event log: a state file does not keep it.
 *
 * @see RFC 9700 §4.14.2 (refresh token rotation; presenting a rotated-away token is reuse and revokes the grant)
 * @see RFC 6749 §10.3 and §10.4 (access and refresh tokens stay confidential: none is recorded)
 * @module
 */
import type { Clock } from "./clock.js";
import { sha256Hex } from "./crypto.js";
import { EVENT_RETENTION_SECONDS, MAX_EVENTS, type SandboxEvent } from "./events.js";
import type { UserId } from "./users.js";

/** The request header naming who sent a request, e.g. `Sandbox-Actor: a1`; the ledger records it. */
export const ACTOR_HEADER = "Sandbox-Actor";

/** The longest actor name kept; a longer header value is cut to this length. */
export const MAX_ACTOR_LENGTH = 64;

const ACTOR_PATTERN = /^[A-Za-z0-9._:-]+$/;

/**
 * The actor a request names in its {@link ACTOR_HEADER} header: the value trimmed and cut to
 * {@link MAX_ACTOR_LENGTH} characters, or null when the header is absent, empty, or holds any
 * character outside `A-Z a-z 0-9 . _ : -` (so that a recorded actor is safe to print and to join on).
 *
 * @example actorOf(new Headers({ "Sandbox-Actor": " a1 " })) // "a1"
 * @example actorOf(new Headers({ "Sandbox-Actor": "a1, a2" })) // null (a repeated header is joined with ", ")
 */
export function actorOf(headers: Headers): string | null {
  const value = headers.get(ACTOR_HEADER)?.trim().slice(0, MAX_ACTOR_LENGTH);
  return value !== undefined && ACTOR_PATTERN.test(value) ? value : null;
}

/**
 * The fingerprint of a refresh token: the SHA-256 of its UTF-8 bytes, as 64 lowercase hex digits.
 * It names the token in the ledger without revealing it, as in the token managers' intent record.
 *
 * @example const fingerprint = await refreshTokenFingerprint(tokens.refreshToken); // "3f1c…" (64 hex digits)
 * @see RFC 6749 §10.4 (refresh tokens must stay confidential)
 */
export function refreshTokenFingerprint(refreshToken: string): Promise<string> {
  return sha256Hex(refreshToken);
}

/** One presentation of a refresh token to `POST /oauth/token`. */
export interface LedgerPresentation {
  /** The `seq` of the matching event of the event log, to join the two. */
  readonly seq: number;
  /** Sandbox time of the request (ISO 8601), as in the event. */
  readonly time: string;
  /** Who sent it: the request's {@link ACTOR_HEADER} (see {@link actorOf}), or null. */
  readonly actor: string | null;
  /** `ok`, or the RFC 6749 §5.2 error code of the answer (`invalid_grant`, `invalid_client`, `invalid_scope`). */
  readonly outcome: string;
  /**
   * The event's `detail`: for `ok`, null (rotated) or `rotation_grace` (answered with the successor
   * already issued); otherwise `refresh_token_reused`, `refresh_token_revoked`, `refresh_token_unknown`,
   * `refresh_token_expired`, `refresh_token_wrong_client`, `unknown_client`, `scope_not_granted`…
   */
  readonly detail: string | null;
}

/** One refresh token that was presented at least once, and each of its presentations. */
export interface LedgerRefreshToken {
  /** SHA-256 of the token, lowercase hex (see {@link refreshTokenFingerprint}). */
  readonly fingerprint: string;
  /** The id of the token's family (`fam_…`), or null for a token the sandbox never issued or has evicted. */
  readonly family: string | null;
  /** Oldest first. More than one means the token was presented again: by a retry, a second actor, or a thief. */
  readonly presentations: readonly LedgerPresentation[];
}

/**
 * A reuse detection: a rotated-away refresh token presented again, past any rotation grace, which
 * revoked its whole family.
 *
 * @see RFC 9700 §4.14.2
 */
export interface LedgerReuse {
  /** The fingerprint of the rotated-away token presented again. */
  readonly fingerprint: string;
  /** The family it revoked. */
  readonly family: string;
  /** The `seq` of the event of that presentation. */
  readonly seq: number;
  readonly time: string;
  readonly actor: string | null;
}

/**
 * What revoked a family: `reuse` (a rotated-away refresh token presented again, RFC 9700 §4.14.2),
 * `revocation` (`POST /oauth/revoke`, RFC 7009 §2.1), or `code_reuse` (its authorization code
 * presented again, RFC 6749 §4.1.2).
 */
export type FamilyRevokedBy = "reuse" | "revocation" | "code_reuse";

/** A family (one sign-in, one grant) the ledger has seen: issued, presented or revoked. */
export interface LedgerFamily {
  /** The family id, `fam_…` (not a secret). */
  readonly id: string;
  /**
   * The id of the user the family belongs to: the user who approved the sign-in, whom
   * `GET /api/v1/auth/user` answers its tokens with. Null only for a family whose tokens the sandbox
   * had already evicted when the ledger first saw it.
   */
  readonly user: UserId | null;
  /**
   * Whether it was revoked while the ledger recorded. False says nothing about expiry: a family
   * whose refresh tokens outlived their 30 days is gone without being revoked.
   */
  readonly revoked: boolean;
  /** What revoked it first, or null while it is not revoked. */
  readonly revokedBy: FamilyRevokedBy | null;
}

/** The whole ledger, as `GET /__sandbox/ledger` answers it. */
export interface LedgerView {
  /** Every refresh token presented, in the order of its first presentation. */
  readonly refreshTokens: readonly LedgerRefreshToken[];
  /** Every reuse detection, oldest first. */
  readonly reuses: readonly LedgerReuse[];
  /**
   * Every family seen, in the order first seen: issued by a code exchange or by `issueTokens` (so
   * a sign-in whose tokens were never refreshed is listed too), presented, or revoked.
   */
  readonly families: readonly LedgerFamily[];
}

/** What the token route knows of a presentation; the event gives its `seq`, `time`, `outcome` and `detail`. */
export interface PresentationInput {
  readonly fingerprint: string;
  readonly family: string | null;
  /** The user of that family, or null when the family is unknown. */
  readonly user: UserId | null;
  readonly actor: string | null;
  /** Whether this presentation was caught as reuse and revoked the family. */
  readonly reused: boolean;
}

/** The ledger's stored form: one record per thing that happened, in time order. */
type LedgerRecord =
  | { readonly kind: "issued"; readonly time: number; readonly family: string; readonly user: UserId }
  | {
      readonly kind: "revoked";
      readonly time: number;
      readonly family: string;
      readonly user: UserId | null;
      readonly by: FamilyRevokedBy;
    }
  | ({
      readonly kind: "presented";
      readonly time: number;
      readonly presentation: LedgerPresentation;
    } & PresentationInput);

/** Reading and clearing the ledger: `sandbox.ledger`. */
export type SandboxLedger = Pick<RefreshLedger, "list" | "clear">;

/**
 * The in-memory refresh-token ledger. Bounded like the event log, with its limits: at most
 * {@link MAX_EVENTS} records (each presentation, issue and revocation is one; older ones are dropped
 * first) and none older than {@link EVENT_RETENTION_SECONDS} of sandbox time. Every record has an
 * event of its own (except an issue by `issueTokens`), so the ledger never reaches back further
 * than the event log. It is cleared on its own: clearing the event log leaves it, and the other way
 * round; event `seq` numbers keep counting across clears, so the two still join.
 *
 * @example
 * const { refreshTokens, reuses, families } = sandbox.ledger.list();
 * expect(refreshTokens.every((t) => t.presentations.length === 1)).toBe(true);
 * @see RFC 9700 §4.14.2 (rotation and reuse detection)
 * @see RFC 6749 §10.3, §10.4 (no token value is recorded, only fingerprints)
 */
export class RefreshLedger {
  readonly #clock: Clock;
  #records: LedgerRecord[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Records that a family was started (its first tokens issued) for `user`, so that
   * {@link LedgerView.families} lists a sign-in that was never refreshed, with its user.
   *
   * @example ledger.familyIssued(tokens.familyId, tokens.user);
   */
  familyIssued(family: string, user: UserId): void {
    this.#append({ kind: "issued", time: this.#clock.now(), family, user });
  }

  /**
   * Records a presentation of a refresh token, with the event the token route recorded for it.
   *
   * @example ledger.presented({ fingerprint, family, user, actor: actorOf(request.headers), reused: false }, event);
   * @see RFC 9700 §4.14.2
   */
  presented(input: PresentationInput, event: SandboxEvent): void {
    const { fingerprint, family, user, actor, reused } = input;
    this.#append({
      kind: "presented",
      time: Date.parse(event.time),
      fingerprint,
      family,
      user,
      actor,
      reused,
      presentation: { seq: event.seq, time: event.time, actor, outcome: event.outcome, detail: event.detail },
    });
  }

  /**
   * Records that a family was revoked by a revocation request or a replayed code. (A revocation by
   * reuse is recorded with its presentation.) Call it only when the family was revoked by this
   * request, not when it already was.
   *
   * @example ledger.familyRevoked(familyId, 42, "revocation");
   * @see RFC 7009 §2.1, RFC 6749 §4.1.2
   */
  familyRevoked(family: string, user: UserId | null, by: Exclude<FamilyRevokedBy, "reuse">): void {
    this.#append({ kind: "revoked", time: this.#clock.now(), family, user, by });
  }

  /** The ledger grouped by refresh token, with the reuses and the families; fresh objects on every call. */
  list(): LedgerView {
    const tokens = new Map<
      string,
      { fingerprint: string; family: string | null; presentations: LedgerPresentation[] }
    >();
    const families = new Map<
      string,
      { id: string; user: UserId | null; revoked: boolean; revokedBy: FamilyRevokedBy | null }
    >();
    const reuses: LedgerReuse[] = [];
    const familyOf = (id: string, user: UserId | null) => {
      let family = families.get(id);
      if (family === undefined) {
        family = { id, user, revoked: false, revokedBy: null };
        families.set(id, family);
      }
      family.user ??= user;
      return family;
    };
    const revoke = (id: string, user: UserId | null, by: FamilyRevokedBy): void => {
      const family = familyOf(id, user);
      if (family.revoked) return;
      family.revoked = true;
      family.revokedBy = by;
    };
    for (const record of this.#records) {
      if (record.kind === "issued") {
        familyOf(record.family, record.user);
      } else if (record.kind === "revoked") {
        revoke(record.family, record.user, record.by);
      } else {
        let token = tokens.get(record.fingerprint);
        if (token === undefined) {
          token = { fingerprint: record.fingerprint, family: null, presentations: [] };
          tokens.set(record.fingerprint, token);
        }
        // An evicted token is unknown to the store by now; an earlier presentation may still name its family.
        token.family ??= record.family;
        token.presentations.push(record.presentation);
        if (record.family !== null) familyOf(record.family, record.user);
        if (record.reused && record.family !== null) {
          revoke(record.family, record.user, "reuse");
          const { seq, time, actor } = record.presentation;
          reuses.push({ fingerprint: record.fingerprint, family: record.family, seq, time, actor });
        }
      }
    }
    return { refreshTokens: [...tokens.values()], reuses, families: [...families.values()] };
  }

  /**
   * Drops the records older than {@link EVENT_RETENTION_SECONDS}. Records are appended in time
   * order and the clock never goes back, so the old ones are at the front.
   */
  sweep(): void {
    const cutoff = this.#clock.now() - EVENT_RETENTION_SECONDS * 1000;
    let old = 0;
    while (old < this.#records.length && (this.#records[old]?.time ?? Number.POSITIVE_INFINITY) < cutoff) old += 1;
    if (old > 0) this.#records.splice(0, old);
  }

  /** Removes everything; returns how many records there were (presentations, issues and revocations). */
  clear(): number {
    const count = this.#records.length;
    this.#records = [];
    return count;
  }

  #append(record: LedgerRecord): void {
    this.#records.push(record);
    if (this.#records.length > MAX_EVENTS) this.#records.splice(0, this.#records.length - MAX_EVENTS);
  }
}
