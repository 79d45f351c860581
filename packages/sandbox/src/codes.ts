/**
 * Authorization codes: single use, 60 seconds, bound to the client, the redirect URI, the PKCE
 * challenge and the approved scopes.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { randomToken } from "./crypto.js";

/** Lifetime of an authorization code in seconds. @see RFC 6749 §4.1.2 (a maximum of 10 minutes is RECOMMENDED) */
export const CODE_LIFETIME_SECONDS = 60;

/** What a code was issued for. */
export interface CodeGrant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly scopes: readonly string[];
}

interface CodeRecord extends CodeGrant {
  readonly expiresAt: number;
  used: boolean;
  /** The token family issued with this code, so that a replay can revoke it. */
  familyId: string | undefined;
}

/** The outcome of presenting a code at the token endpoint. */
export type CodeRedemption =
  | { readonly kind: "ok"; readonly grant: CodeGrant; bindFamily(familyId: string): void }
  | { readonly kind: "unknown" | "expired" }
  | { readonly kind: "reused"; readonly familyId: string | undefined };

/** Issues and redeems authorization codes. */
export class CodeStore {
  readonly #codes = new Map<string, CodeRecord>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Issues a new code for an approved authorization request.
   *
   * @example const code = codes.issue({ clientId, redirectUri, codeChallenge, scopes: ["profile:read"] });
   * @see RFC 6749 §4.1.2
   */
  issue(grant: CodeGrant): string {
    this.#prune();
    const code = randomToken("ac_");
    this.#codes.set(code, {
      ...grant,
      scopes: [...grant.scopes],
      expiresAt: this.#clock.now() + CODE_LIFETIME_SECONDS * 1000,
      used: false,
      familyId: undefined,
    });
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
    record.used = true;
    if (this.#clock.now() >= record.expiresAt) return { kind: "expired" };
    return {
      kind: "ok",
      grant: record,
      bindFamily(familyId) {
        record.familyId = familyId;
      },
    };
  }

  /** Number of codes held (issued and not yet pruned). */
  get size(): number {
    return this.#codes.size;
  }

  /**
   * Drops codes long past their expiry; a used code is kept for a while to detect replays. Codes
   * are held in issue order and the clock never goes back, so the oldest come first.
   */
  #prune(): void {
    const cutoff = this.#clock.now() - 10 * 60 * 1000;
    for (const [code, record] of this.#codes) {
      if (record.expiresAt >= cutoff) break;
      this.#codes.delete(code);
    }
  }
}
