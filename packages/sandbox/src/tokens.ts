/**
 * Access and refresh tokens: opaque random strings held in memory, grouped in families (one per
 * grant), with refresh token rotation, reuse detection and an optional rotation grace period.
 *
 * Every token record is evicted once its own lifetime is over (on use, and by {@link TokenStore.sweep},
 * which the sandbox runs on a timer and when its clock moves); a family goes with its last token.
 *
 * @module
 */
import type { Clock } from "./clock.js";
import { randomToken } from "./crypto.js";
import type { UserId } from "./users.js";

/** Access token lifetime in seconds (15 minutes). @see RFC 6749 §5.1 (expires_in) */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 15 * 60;
/** Refresh token lifetime in seconds (30 days), counted from the issue of each refresh token. */
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 60 * 60;

/** The largest rotation grace period accepted, in seconds (an hour; real servers offer up to a minute or so). */
export const MAX_ROTATION_GRACE_SECONDS = 3600;

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
  /** The id of the user who approved the grant: `GET /api/v1/auth/user` answers the tokens with this user. */
  readonly user: UserId;
}

/** What the resource server learns about an access token. */
export type AccessTokenState =
  | {
      readonly state: "active";
      readonly clientId: string;
      /** The id of the user the token's grant belongs to. */
      readonly user: UserId;
      readonly scopes: readonly string[];
      readonly expiresAt: number;
    }
  | { readonly state: "expired" | "revoked" | "unknown" };

/** The outcome of a refresh token grant; `grace` tells a replay answered within the rotation grace period. */
export type RefreshOutcome =
  | { readonly kind: "ok"; readonly tokens: IssuedTokens; readonly grace: boolean }
  | { readonly kind: "invalid_grant"; readonly reason: "unknown" | "expired" | "revoked" | "wrong_client" | "reused" }
  | { readonly kind: "invalid_scope" };

/** The stored form of the tokens, for the state file. Times are epoch milliseconds of the sandbox clock. */
export interface TokenSnapshot {
  readonly families: readonly {
    readonly id: string;
    readonly clientId: string;
    /** The user of the grant; absent in a state file of a sandbox that had one user (version 1): its default user. */
    readonly user?: UserId;
    readonly scopes: readonly string[];
    readonly revoked: boolean;
  }[];
  readonly accessTokens: readonly {
    readonly token: string;
    readonly family: string;
    readonly scopes: readonly string[];
    readonly expiresAt: number;
  }[];
  readonly refreshTokens: readonly {
    readonly token: string;
    readonly family: string;
    readonly expiresAt: number;
    /** When it was rotated away; absent while it is the family's current refresh token. */
    readonly rotatedAt?: number;
    /** The refresh token it was rotated into, kept only during the rotation grace period. */
    readonly successor?: string;
  }[];
}

interface Family {
  readonly id: string;
  readonly clientId: string;
  /** The user who approved the grant; every token of the family answers as this user. */
  readonly user: UserId;
  /** The scopes of the grant; a refresh may narrow an access token, never the family. */
  readonly scopes: readonly string[];
  revoked: boolean;
  /** How many token records still point at the family; it is forgotten when none is left. */
  liveTokens: number;
}

interface AccessRecord {
  readonly family: Family;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
}

interface RefreshRecord {
  readonly family: Family;
  readonly expiresAt: number;
  /** Set when rotated away: reuse detection needs only this mark, the family and the expiry. */
  rotatedAt: number | undefined;
  /** The successor, kept while a replay may still be answered with it (rotation grace). */
  successor: string | undefined;
}

/** Options of {@link TokenStore}. */
export interface TokenStoreOptions {
  /**
   * Seconds after a rotation during which the rotated-away refresh token, presented again, is
   * answered with the same successor refresh token (and a new access token) instead of revoking
   * the family. 0 (the default) is strict rotation.
   */
  readonly rotationGraceSeconds?: number;
  /** Called after every change worth persisting (issue, rotation, revocation). */
  readonly onChange?: () => void;
}

/** Issues, rotates, checks, revokes and evicts tokens. */
export class TokenStore {
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #onChange: () => void;
  readonly #access = new Map<string, AccessRecord>();
  readonly #refresh = new Map<string, RefreshRecord>();
  readonly #families = new Map<string, Family>();

  constructor(clock: Clock, options: TokenStoreOptions = {}) {
    this.#clock = clock;
    this.#graceMs = (options.rotationGraceSeconds ?? 0) * 1000;
    this.#onChange = options.onChange ?? (() => undefined);
  }

  /**
   * Starts a new family for a grant of `user` and issues its first access and refresh tokens.
   *
   * @example const tokens = store.issue("demo", ["profile:read"], 42);
   * @see RFC 6749 §5.1
   */
  issue(clientId: string, scopes: readonly string[], user: UserId): IssuedTokens {
    const family: Family = {
      id: randomToken("fam_", 16),
      clientId,
      user,
      scopes: [...scopes],
      revoked: false,
      liveTokens: 0,
    };
    this.#families.set(family.id, family);
    const tokens = this.#issueInto(family, family.scopes);
    this.#onChange();
    return tokens;
  }

  /**
   * Exchanges a refresh token: the presented token is rotated away and a new access token and a
   * new refresh token are issued. Presenting a rotated token again revokes the whole family,
   * unless it comes within the rotation grace period while its successor is still unused: then
   * the answer carries that same successor and a new access token.
   *
   * @param requestedScopes a narrower scope for the new access token, or undefined for the grant's scope
   * @see RFC 6749 §6 (refresh; a narrower scope must be included in the original grant)
   * @see RFC 9700 §4.14.2 (refresh token rotation and reuse detection)
   */
  refresh(refreshToken: string, clientId: string, requestedScopes: readonly string[] | undefined): RefreshOutcome {
    const now = this.#clock.now();
    const record = this.#refresh.get(refreshToken);
    if (record === undefined) return { kind: "invalid_grant", reason: "unknown" };
    const family = record.family;
    if (family.clientId !== clientId) return { kind: "invalid_grant", reason: "wrong_client" };
    if (now >= record.expiresAt) {
      this.#evictRefresh(refreshToken, record);
      return { kind: "invalid_grant", reason: "expired" };
    }
    if (family.revoked) return { kind: "invalid_grant", reason: "revoked" };
    // Reuse is decided before anything else about the request, so that no parameter can dodge it.
    const successor = record.rotatedAt === undefined ? undefined : this.#graceSuccessor(record, now);
    if (record.rotatedAt !== undefined && successor === undefined) {
      family.revoked = true;
      this.#onChange();
      return { kind: "invalid_grant", reason: "reused" };
    }
    let scopes = family.scopes;
    if (requestedScopes !== undefined) {
      if (!requestedScopes.every((scope) => family.scopes.includes(scope))) return { kind: "invalid_scope" };
      scopes = [...new Set(requestedScopes)];
    }
    if (successor !== undefined) {
      const accessToken = this.#issueAccess(family, scopes, now);
      this.#onChange();
      return {
        kind: "ok",
        grace: true,
        tokens: {
          accessToken,
          refreshToken: successor,
          expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS,
          scopes,
          familyId: family.id,
          user: family.user,
        },
      };
    }
    const tokens = this.#issueInto(family, scopes);
    record.rotatedAt = now;
    record.successor = this.#graceMs > 0 ? tokens.refreshToken : undefined;
    this.#onChange();
    return { kind: "ok", grace: false, tokens };
  }

  /**
   * Tells the state of an access token; an expired one is evicted on the way.
   *
   * @see RFC 6750 §3.1 (invalid_token: expired, revoked, malformed or invalid)
   */
  inspect(accessToken: string): AccessTokenState {
    const record = this.#access.get(accessToken);
    if (record === undefined) return { state: "unknown" };
    if (this.#clock.now() >= record.expiresAt) {
      this.#evictAccess(accessToken, record);
      return { state: "expired" };
    }
    if (record.family.revoked) return { state: "revoked" };
    return {
      state: "active",
      clientId: record.family.clientId,
      user: record.family.user,
      scopes: record.scopes,
      expiresAt: record.expiresAt,
    };
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
   * The id of the family an access or refresh token belongs to (not a secret), or undefined for a
   * token never issued here or already evicted.
   *
   * @example const family = store.familyOf(refreshToken); // "fam_…"
   */
  familyOf(token: string): string | undefined {
    return (this.#access.get(token)?.family ?? this.#refresh.get(token)?.family)?.id;
  }

  /**
   * The id of the user an access or refresh token's grant belongs to, or undefined for a token never
   * issued here or already evicted.
   *
   * @example const user = store.userOf(refreshToken); // 42
   */
  userOf(token: string): UserId | undefined {
    return (this.#access.get(token)?.family ?? this.#refresh.get(token)?.family)?.user;
  }

  /**
   * The user of a family that still has tokens, or undefined.
   *
   * @example const user = store.familyUser(tokens.familyId); // 42
   */
  familyUser(familyId: string): UserId | undefined {
    return this.#families.get(familyId)?.user;
  }

  /**
   * The id of the family of a refresh token (an access token sent in its place has none), or
   * undefined for a token never issued here or already evicted.
   *
   * @example const family = store.refreshFamilyOf(body.refresh_token); // "fam_…"
   */
  refreshFamilyOf(refreshToken: string): string | undefined {
    return this.#refresh.get(refreshToken)?.family.id;
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
    family.revoked = true;
    this.#onChange();
    return "revoked";
  }

  /**
   * Revokes the family a code's tokens belong to (a replayed authorization code); says whether this
   * call revoked it, for the ledger.
   *
   * @see RFC 6749 §4.1.2
   */
  revokeFamilyById(familyId: string): "revoked" | "already_revoked" | "unknown" {
    const family = this.#families.get(familyId);
    if (family === undefined) return "unknown";
    if (family.revoked) return "already_revoked";
    family.revoked = true;
    this.#onChange();
    return "revoked";
  }

  /**
   * Evicts every token whose lifetime is over, the successors kept past the grace period, and the
   * families left without tokens. Linear in the number of records; the sandbox runs it at most
   * once a minute of sandbox time, and when its clock is moved.
   *
   * @see RFC 9700 §4.14.2 (a rotated refresh token is needed for reuse detection only while it could be presented)
   */
  sweep(): void {
    const now = this.#clock.now();
    for (const [token, record] of this.#access) {
      if (now >= record.expiresAt) this.#evictAccess(token, record);
    }
    for (const [token, record] of this.#refresh) {
      if (now >= record.expiresAt) this.#evictRefresh(token, record);
      else if (
        record.successor !== undefined &&
        record.rotatedAt !== undefined &&
        now >= record.rotatedAt + this.#graceMs
      ) {
        record.successor = undefined;
      }
    }
  }

  /** Whether a family still has tokens (a replayed code can still revoke something). */
  hasFamily(familyId: string): boolean {
    return this.#families.has(familyId);
  }

  /** Counts of the tokens held, for the programmatic API and the tests. */
  stats(): { families: number; accessTokens: number; refreshTokens: number } {
    return { families: this.#families.size, accessTokens: this.#access.size, refreshTokens: this.#refresh.size };
  }

  /** Every record, for the state file. */
  snapshot(): TokenSnapshot {
    return {
      families: [...this.#families.values()].map(({ id, clientId, user, scopes, revoked }) => ({
        id,
        clientId,
        user,
        scopes,
        revoked,
      })),
      accessTokens: [...this.#access].map(([token, record]) => ({
        token,
        family: record.family.id,
        scopes: record.scopes,
        expiresAt: record.expiresAt,
      })),
      refreshTokens: [...this.#refresh].map(([token, record]) => ({
        token,
        family: record.family.id,
        expiresAt: record.expiresAt,
        ...(record.rotatedAt === undefined ? {} : { rotatedAt: record.rotatedAt }),
        ...(record.successor === undefined ? {} : { successor: record.successor }),
      })),
    };
  }

  /**
   * Loads the records of a snapshot into this (empty) store; records of unknown families are
   * skipped, expired ones go at the next sweep. `userOf` gives each family's user: the stored one, or
   * for a family stored without one the default user; undefined drops the family (its user is no
   * longer configured), and its tokens with it.
   */
  restore(snapshot: TokenSnapshot, userOf: (stored: UserId | undefined) => UserId | undefined): void {
    for (const { id, clientId, user: stored, scopes, revoked } of snapshot.families) {
      const user = userOf(stored);
      if (user === undefined) continue;
      this.#families.set(id, { id, clientId, user, scopes: [...scopes], revoked, liveTokens: 0 });
    }
    for (const { token, family: familyId, scopes, expiresAt } of snapshot.accessTokens) {
      const family = this.#families.get(familyId);
      if (family === undefined) continue;
      family.liveTokens += 1;
      this.#access.set(token, { family, scopes: [...scopes], expiresAt });
    }
    for (const { token, family: familyId, expiresAt, rotatedAt, successor } of snapshot.refreshTokens) {
      const family = this.#families.get(familyId);
      if (family === undefined) continue;
      family.liveTokens += 1;
      this.#refresh.set(token, { family, expiresAt, rotatedAt, successor });
    }
    for (const [id, family] of this.#families) if (family.liveTokens === 0) this.#families.delete(id);
    // What expired while the sandbox was down is swept by the housekeeping run that follows a restore.
  }

  /**
   * The successor to answer a replay of `record` with, or undefined when the replay is reuse: past
   * the grace period, or the successor was itself rotated or is gone (the chain moved on).
   */
  #graceSuccessor(record: RefreshRecord, now: number): string | undefined {
    if (record.successor === undefined || record.rotatedAt === undefined || now >= record.rotatedAt + this.#graceMs)
      return undefined;
    const next = this.#refresh.get(record.successor);
    if (next === undefined || next.rotatedAt !== undefined || now >= next.expiresAt) return undefined;
    return record.successor;
  }

  #issueInto(family: Family, scopes: readonly string[]): IssuedTokens {
    const now = this.#clock.now();
    const accessToken = this.#issueAccess(family, scopes, now);
    const refreshToken = randomToken("rt_");
    this.#refresh.set(refreshToken, {
      family,
      expiresAt: now + REFRESH_TOKEN_LIFETIME_SECONDS * 1000,
      rotatedAt: undefined,
      successor: undefined,
    });
    family.liveTokens += 1;
    return {
      accessToken,
      refreshToken,
      expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS,
      scopes,
      familyId: family.id,
      user: family.user,
    };
  }

  #issueAccess(family: Family, scopes: readonly string[], now: number): string {
    const accessToken = randomToken("at_");
    this.#access.set(accessToken, { family, scopes, expiresAt: now + ACCESS_TOKEN_LIFETIME_SECONDS * 1000 });
    family.liveTokens += 1;
    return accessToken;
  }

  #evictAccess(token: string, record: AccessRecord): void {
    this.#access.delete(token);
    this.#release(record.family);
  }

  #evictRefresh(token: string, record: RefreshRecord): void {
    this.#refresh.delete(token);
    this.#release(record.family);
  }

  /** Forgets a family with its last token: nothing is left that reuse or a replayed code could revoke. */
  #release(family: Family): void {
    family.liveTokens -= 1;
    if (family.liveTokens <= 0) this.#families.delete(family.id);
  }
}
