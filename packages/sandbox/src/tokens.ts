/**
 * Access and refresh tokens: opaque random strings held in memory, grouped in families (one per
 * grant), with refresh token rotation and reuse detection.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { randomToken } from "./crypto.js";

/** Access token lifetime in seconds (15 minutes). @see RFC 6749 §5.1 (expires_in) */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 15 * 60;
/** Refresh token lifetime in seconds (30 days), counted from the issue of each refresh token. */
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 60 * 60;

/** The tokens of one successful token response. */
export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** Seconds until the access token expires. */
  readonly expiresIn: number;
  /** The scopes of the access token. */
  readonly scopes: readonly string[];
  /** The family (grant) the tokens belong to. */
  readonly familyId: string;
}

/** What the resource server learns about an access token. */
export type AccessTokenState =
  | { readonly state: "active"; readonly clientId: string; readonly scopes: readonly string[]; readonly expiresAt: number }
  | { readonly state: "expired" | "revoked" | "unknown" };

/** The outcome of a refresh token grant. */
export type RefreshOutcome =
  | { readonly kind: "ok"; readonly tokens: IssuedTokens }
  | { readonly kind: "invalid_grant"; readonly reason: "unknown" | "expired" | "revoked" | "wrong_client" | "reused" }
  | { readonly kind: "invalid_scope" };

interface Family {
  readonly id: string;
  readonly clientId: string;
  /** The scopes of the grant; a refresh may narrow an access token, never the family. */
  readonly scopes: readonly string[];
  revoked: boolean;
  readonly tokens: Set<string>;
}

interface AccessRecord {
  readonly family: Family;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
}

interface RefreshRecord {
  readonly family: Family;
  readonly expiresAt: number;
  rotated: boolean;
}

/** Issues, rotates, checks and revokes tokens. */
export class TokenStore {
  readonly #clock: Clock;
  readonly #access = new Map<string, AccessRecord>();
  readonly #refresh = new Map<string, RefreshRecord>();
  readonly #families = new Map<string, Family>();
  #issuedSincePrune = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Starts a new family for a grant and issues its first access and refresh tokens.
   *
   * @example const tokens = store.issue("demo", ["profile:read"]);
   * @see RFC 6749 §5.1
   */
  issue(clientId: string, scopes: readonly string[]): IssuedTokens {
    const family: Family = { id: randomToken("fam_", 16), clientId, scopes: [...scopes], revoked: false, tokens: new Set() };
    this.#families.set(family.id, family);
    return this.#issueInto(family, family.scopes);
  }

  /**
   * Exchanges a refresh token: the presented token is rotated away and a new access token and a
   * new refresh token are issued. Presenting a rotated token again revokes the whole family.
   *
   * @param requestedScopes a narrower scope for the new access token, or undefined for the grant's scope
   * @see RFC 6749 §6 (refresh; a narrower scope must be included in the original grant)
   * @see RFC 9700 §4.14.2 (refresh token rotation and reuse detection)
   */
  refresh(refreshToken: string, clientId: string, requestedScopes: readonly string[] | undefined): RefreshOutcome {
    const record = this.#refresh.get(refreshToken);
    if (record === undefined) return { kind: "invalid_grant", reason: "unknown" };
    const family = record.family;
    if (family.clientId !== clientId) return { kind: "invalid_grant", reason: "wrong_client" };
    if (family.revoked) return { kind: "invalid_grant", reason: "revoked" };
    if (record.rotated) {
      this.#revokeFamily(family);
      return { kind: "invalid_grant", reason: "reused" };
    }
    if (this.#clock.now() >= record.expiresAt) return { kind: "invalid_grant", reason: "expired" };
    let scopes = family.scopes;
    if (requestedScopes !== undefined) {
      if (!requestedScopes.every((scope) => family.scopes.includes(scope))) return { kind: "invalid_scope" };
      scopes = [...new Set(requestedScopes)];
    }
    record.rotated = true;
    return { kind: "ok", tokens: this.#issueInto(family, scopes) };
  }

  /**
   * Tells the state of an access token.
   *
   * @see RFC 6750 §3.1 (invalid_token: expired, revoked, malformed or invalid)
   */
  inspect(accessToken: string): AccessTokenState {
    const record = this.#access.get(accessToken);
    if (record === undefined) return { state: "unknown" };
    if (record.family.revoked) return { state: "revoked" };
    if (this.#clock.now() >= record.expiresAt) return { state: "expired" };
    return { state: "active", clientId: record.family.clientId, scopes: record.scopes, expiresAt: record.expiresAt };
  }

  /**
   * The client an access or refresh token was issued to, or undefined for a token never issued
   * here: a request without `client_id` is identified by its token (RFC 6749 §3.2.1 makes
   * `client_id` a MAY outside the authorization_code request).
   *
   * @example const clientId = store.clientOf(refreshToken) ?? "unknown";
   */
  clientOf(token: string): string | undefined {
    return (this.#access.get(token)?.family ?? this.#refresh.get(token)?.family)?.clientId;
  }

  /**
   * Revokes the family of an access or refresh token, when the token was issued to `clientId`.
   * Returns what happened, for the event log; the caller answers 200 in every case.
   *
   * @see RFC 7009 §2.1 (revoking a token may revoke the other tokens of the same grant)
   * @see RFC 7009 §2.2 (invalid tokens do not cause an error response)
   */
  revoke(token: string, clientId: string): "revoked" | "already_revoked" | "unknown" | "wrong_client" {
    const family = this.#access.get(token)?.family ?? this.#refresh.get(token)?.family;
    if (family === undefined) return "unknown";
    if (family.clientId !== clientId) return "wrong_client";
    if (family.revoked) return "already_revoked";
    this.#revokeFamily(family);
    return "revoked";
  }

  /** Revokes the family a code's tokens belong to (a replayed authorization code). @see RFC 6749 §4.1.2 */
  revokeFamilyById(familyId: string): boolean {
    const family = this.#families.get(familyId);
    if (family === undefined) return false;
    this.#revokeFamily(family);
    return true;
  }

  /** Counts of the tokens held, for the programmatic API and the tests. */
  stats(): { families: number; accessTokens: number; refreshTokens: number } {
    return { families: this.#families.size, accessTokens: this.#access.size, refreshTokens: this.#refresh.size };
  }

  #issueInto(family: Family, scopes: readonly string[]): IssuedTokens {
    this.#maybePrune();
    const now = this.#clock.now();
    const accessToken = randomToken("at_");
    const refreshToken = randomToken("rt_");
    this.#access.set(accessToken, { family, scopes, expiresAt: now + ACCESS_TOKEN_LIFETIME_SECONDS * 1000 });
    this.#refresh.set(refreshToken, { family, expiresAt: now + REFRESH_TOKEN_LIFETIME_SECONDS * 1000, rotated: false });
    family.tokens.add(accessToken);
    family.tokens.add(refreshToken);
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS, scopes, familyId: family.id };
  }

  #revokeFamily(family: Family): void {
    family.revoked = true;
  }

  /** Forgets tokens past their expiry, now and then, so that a long run does not grow without bound. */
  #maybePrune(): void {
    this.#issuedSincePrune += 1;
    if (this.#issuedSincePrune < 1000) return;
    this.#issuedSincePrune = 0;
    const now = this.#clock.now();
    for (const [token, record] of this.#access) {
      if (record.expiresAt <= now) {
        this.#access.delete(token);
        record.family.tokens.delete(token);
      }
    }
    for (const [token, record] of this.#refresh) {
      if (record.expiresAt <= now) {
        this.#refresh.delete(token);
        record.family.tokens.delete(token);
      }
    }
    for (const [id, family] of this.#families) {
      if (family.tokens.size === 0) this.#families.delete(id);
    }
  }
}
