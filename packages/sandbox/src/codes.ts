/**
 * Authorization codes: single use, 60 seconds, bound to the client, the redirect URI, the PKCE
 * challenge and the approved scopes.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { randomToken } from "./crypto.js";
import type { UserId } from "./users.js";

/** Lifetime of an authorization code in seconds. @see RFC 6749 §4.1.2 (a maximum of 10 minutes is RECOMMENDED) */
export const CODE_LIFETIME_SECONDS = 60;

/** What a code was issued for. */
export interface CodeGrant {
  readonly clientId: string;
  /** The user who approved the request: the tokens issued for the code belong to this user. */
  readonly user: UserId;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly scopes: readonly string[];
}

interface CodeRecord extends CodeGrant {
  readonly expiresAt: number;
  readonly used: false;
}

/**
 * A code after its first presentation: all a replay needs is the family to revoke. It is kept while
 * that family lives, so a replay revokes the tokens whenever it comes; a code that issued no tokens
 * is kept until its own expiry.
 */
interface UsedCode {
  readonly expiresAt: number;
  readonly used: true;
  familyId: string | undefined;
}

/** The outcome of presenting a code at the token endpoint. */
export type CodeRedemption =
  | { readonly kind: "ok"; readonly grant: CodeGrant; bindFamily(familyId: string): void }
  | { readonly kind: "unknown" | "expired" }
  | { readonly kind: "reused"; readonly familyId: string | undefined };

/** The stored form of the codes, for the state file. */
export type CodeSnapshot = readonly (
  | (Omit<CodeGrant, "user"> & {
      /** Absent in a state file of version 1, where every code was the default user's. */
      readonly user?: UserId;
      readonly code: string;
      readonly expiresAt: number;
      readonly used: false;
    })
  | { readonly code: string; readonly expiresAt: number; readonly used: true; readonly familyId?: string }
)[];

/** Issues, redeems and evicts authorization codes. */
export class CodeStore {
  readonly #codes = new Map<string, CodeRecord | UsedCode>();
  readonly #clock: Clock;
  readonly #onChange: () => void;

  constructor(clock: Clock, onChange: () => void = () => undefined) {
    this.#clock = clock;
    this.#onChange = onChange;
  }

  /**
   * Issues a new code for an approved authorization request.
   *
   * @example const code = codes.issue({ clientId, user: 42, redirectUri, codeChallenge, scopes: ["profile:read"] });
   * @see RFC 6749 §4.1.2
   */
  issue(grant: CodeGrant): string {
    const code = randomToken("ac_");
    this.#codes.set(code, {
      clientId: grant.clientId,
      user: grant.user,
      redirectUri: grant.redirectUri,
      codeChallenge: grant.codeChallenge,
      scopes: [...grant.scopes],
      expiresAt: this.#clock.now() + CODE_LIFETIME_SECONDS * 1000,
      used: false,
    });
    this.#onChange();
    return code;
  }

  /**
   * Presents a code. The first presentation uses it up, whatever the outcome of the checks that
   * follow (client, redirect URI, verifier), so that a verifier cannot be guessed by retrying.
   * A later presentation reports `reused` with the family issued from it, which the caller revokes.
   *
   * @see RFC 6749 §4.1.2 (single use; on reuse the server SHOULD revoke the tokens issued from it)
   */
  redeem(code: string): CodeRedemption {
    const record = this.#codes.get(code);
    if (record === undefined) return { kind: "unknown" };
    if (record.used) return { kind: "reused", familyId: record.familyId };
    const used: UsedCode = { expiresAt: record.expiresAt, used: true, familyId: undefined };
    this.#codes.set(code, used);
    this.#onChange();
    if (this.#clock.now() >= record.expiresAt) return { kind: "expired" };
    const onChange = this.#onChange;
    return {
      kind: "ok",
      grant: record,
      bindFamily(familyId) {
        used.familyId = familyId;
        onChange();
      },
    };
  }

  /** Number of codes held (issued and not yet evicted). */
  get size(): number {
    return this.#codes.size;
  }

  /**
   * Evicts the codes nothing needs any more: an unused code at its expiry, a used one when the
   * family it issued is gone (`familyLives` tells), or at its expiry when it issued none.
   *
   * @see RFC 6749 §4.1.2 (a replay should revoke the tokens issued from the code)
   */
  sweep(familyLives: (familyId: string) => boolean): void {
    const now = this.#clock.now();
    for (const [code, record] of this.#codes) {
      const needed =
        record.used && record.familyId !== undefined ? familyLives(record.familyId) : now < record.expiresAt;
      if (!needed) this.#codes.delete(code);
    }
  }

  /** Every code, for the state file. */
  snapshot(): CodeSnapshot {
    return [...this.#codes].map(([code, record]) =>
      record.used
        ? {
            code,
            expiresAt: record.expiresAt,
            used: true as const,
            ...(record.familyId === undefined ? {} : { familyId: record.familyId }),
          }
        : { code, ...record },
    );
  }

  /**
   * Loads the codes of a snapshot into this (empty) store. `userOf` gives an unused code's user: the
   * stored one, or for a code stored without one the default user; undefined drops the code (its user
   * is no longer configured).
   */
  restore(snapshot: CodeSnapshot, userOf: (stored: UserId | undefined) => UserId | undefined): void {
    for (const entry of snapshot) {
      const { code, ...record } = entry;
      if (record.used) {
        this.#codes.set(code, { expiresAt: record.expiresAt, used: true, familyId: record.familyId });
        continue;
      }
      const user = userOf(record.user);
      if (user !== undefined) this.#codes.set(code, { ...record, user, scopes: [...record.scopes] });
    }
  }
}
