/**
 * `POST /oauth/token`: the authorization code grant with PKCE and the refresh token grant with
 * rotation and reuse detection.
 *
 * @module
 */
import type { Context } from "hono";
import { readBody, requiredString, stringField } from "../body.js";
import { s256Challenge, timingSafeEqual } from "../crypto.js";
import { BadRequestError, NO_STORE_HEADERS, oauthError, type OAuthErrorCode } from "../errors.js";
import { actorOf, refreshTokenFingerprint, type PresentationInput } from "../ledger.js";
import { checkScope } from "../scopes.js";
import type { SandboxState } from "../tenant-state.js";
import type { IssuedTokens } from "../tokens.js";
import type { UserId } from "../users.js";

const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/** A refusal on its way to becoming an RFC 6749 §5.2 answer and an event (with the user of the grant it concerns, if any). */
class Refusal {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly detail: string,
    readonly user: UserId | null = null,
  ) {}
}

/**
 * The JSON token response: `access_token`, `token_type` `Bearer`, `expires_in` in seconds, the
 * new `refresh_token` (always, the sandbox rotates on every refresh) and the granted `scope`.
 *
 * @see RFC 6749 §5.1
 */
export function tokenResponse(tokens: IssuedTokens): Response {
  return Response.json(
    {
      access_token: tokens.accessToken,
      token_type: "Bearer",
      expires_in: tokens.expiresIn,
      refresh_token: tokens.refreshToken,
      scope: tokens.scopes.join(" "),
    },
    { status: 200, headers: NO_STORE_HEADERS },
  );
}

/** The event detail of a reuse detection. */
const REUSE_DETAIL = "refresh_token_reused";

/**
 * Handles `POST /oauth/token` (JSON body only, as the contract says). Every answer is recorded in
 * the event log without token values; every refresh token presented, by its fingerprint, in the
 * refresh-token ledger too, with the event's `seq`.
 *
 * @see RFC 6749 §4.1.3 (code exchange), §6 (refresh), §5.2 (errors, all 400)
 * @see RFC 7636 §4.6 (verifier check)
 * @see RFC 9700 §4.14.2 (refresh token rotation; reuse revokes the family)
 */
export function tokenRoute(state: SandboxState) {
  return async (c: Context): Promise<Response> => {
    let grantType: string | null = null;
    let clientId: string | null = null;
    /** The refresh token presented, as the ledger names it; set once the token is read. */
    let presented: Omit<PresentationInput, "reused"> | undefined;
    const record = (status: number, outcome: string, detail: string | null, user: UserId | null): void => {
      const event = state.events.record({ endpoint: "token", grantType, clientId, user, status, outcome, detail });
      if (presented !== undefined) state.ledger.presented({ ...presented, reused: detail === REUSE_DETAIL }, event);
    };
    try {
      const body = await readBody(c.req.raw, ["json"]);
      const rawGrant = body["grant_type"];
      grantType = typeof rawGrant === "string" ? rawGrant : null;
      const rawClient = body["client_id"];
      clientId = typeof rawClient === "string" ? rawClient : null;
      const grant = requiredString(body, "grant_type");
      let tokens: IssuedTokens;
      let detail: string | null = null;
      if (grant === "authorization_code") tokens = await exchangeCode(state, body);
      else if (grant === "refresh_token") {
        const refreshToken = requiredString(body, "refresh_token");
        const fingerprint = await refreshTokenFingerprint(refreshToken);
        // Nothing is awaited from here to the answer: the family is read right before the store
        // rotates the token (or evicts it, expired), and the ledger records what the store decided.
        const family = state.tokens.refreshFamilyOf(refreshToken) ?? null;
        presented = {
          fingerprint,
          family,
          user: family === null ? null : (state.tokens.familyUser(family) ?? null),
          actor: actorOf(c.req.raw.headers),
        };
        ({ tokens, detail, clientId } = refresh(state, body, refreshToken));
      } else
        throw new Refusal(
          "unsupported_grant_type",
          "grant_type must be authorization_code or refresh_token.",
          "unsupported_grant_type",
        );
      record(200, "ok", detail, tokens.user);
      return tokenResponse(tokens);
    } catch (error) {
      const refusal =
        error instanceof Refusal
          ? error
          : error instanceof BadRequestError
            ? new Refusal("invalid_request", error.message, "malformed_request")
            : undefined;
      if (refusal === undefined) throw error;
      record(400, refusal.error, refusal.detail, presented?.user ?? refusal.user);
      return oauthError(refusal.error, refusal.description);
    }
  };
}

/** Refuses a client id that is not (or no longer) registered. */
function knownClient(state: SandboxState, clientId: string): string {
  if (state.clients.get(clientId) === undefined) {
    throw new Refusal("invalid_client", "The client is not registered.", "unknown_client");
  }
  return clientId;
}

async function exchangeCode(state: SandboxState, body: Record<string, unknown>): Promise<IssuedTokens> {
  const clientId = requiredString(body, "client_id");
  const redirectUri = requiredString(body, "redirect_uri");
  const code = requiredString(body, "code");
  const verifier = requiredString(body, "code_verifier");
  if (!VERIFIER_PATTERN.test(verifier)) {
    throw new BadRequestError("code_verifier must be 43 to 128 URL-safe characters.");
  }
  knownClient(state, clientId);
  // Hashed before the code is taken: from taking the code to binding it to the tokens it issues, no
  // await may let a concurrent replay in (it would find the code used but bound to no tokens yet).
  const challenge = await s256Challenge(verifier);
  const redemption = state.codes.redeem(code);
  const invalid = "The authorization code is invalid, expired or was already used.";
  switch (redemption.kind) {
    case "unknown":
      throw new Refusal("invalid_grant", invalid, "code_unknown");
    case "expired":
      throw new Refusal("invalid_grant", invalid, "code_expired");
    case "reused": {
      // RFC 6749 §4.1.2: a replayed code SHOULD revoke the tokens issued from it.
      const family = redemption.familyId;
      const user = family === undefined ? null : (state.tokens.familyUser(family) ?? null);
      if (family !== undefined && state.tokens.revokeFamilyById(family) === "revoked") {
        state.ledger.familyRevoked(family, user, "code_reuse");
      }
      throw new Refusal("invalid_grant", invalid, "code_reused", user);
    }
    case "ok":
      break;
  }
  const grant = redemption.grant;
  if (grant.clientId !== clientId) throw new Refusal("invalid_grant", invalid, "code_wrong_client");
  if (grant.redirectUri !== redirectUri) {
    throw new Refusal("invalid_grant", "redirect_uri differs from the authorization request.", "redirect_uri_mismatch");
  }
  if (!timingSafeEqual(challenge, grant.codeChallenge)) {
    throw new Refusal("invalid_grant", "code_verifier does not match the code_challenge.", "verifier_mismatch");
  }
  const tokens = state.tokens.issue(clientId, grant.scopes, grant.user);
  redemption.bindFamily(tokens.familyId);
  state.ledger.familyIssued(tokens.familyId, tokens.user);
  return tokens;
}

/** A refresh; `detail` is `rotation_grace` when a just-rotated token was answered with its successor. */
function refresh(
  state: SandboxState,
  body: Record<string, unknown>,
  refreshToken: string,
): { tokens: IssuedTokens; detail: string | null; clientId: string } {
  // client_id is optional here (RFC 6749 §3.2.1): without it, the refresh token names its client,
  // which must still be registered.
  const clientId =
    body["client_id"] === undefined ? state.tokens.clientOf(refreshToken) : requiredString(body, "client_id");
  if (clientId === undefined)
    throw new Refusal("invalid_grant", "The refresh token is invalid, expired or revoked.", "refresh_token_unknown");
  knownClient(state, clientId);
  const scope = stringField(body, "scope");
  let requested: readonly string[] | undefined;
  if (scope !== undefined) {
    const client = state.clients.get(clientId);
    const checked = client === undefined ? undefined : checkScope(scope, client);
    if (checked === undefined || !checked.ok) {
      throw new Refusal(
        "invalid_scope",
        checked?.ok === false ? checked.description : "Invalid scope.",
        "invalid_scope",
      );
    }
    requested = checked.scopes;
  }
  const outcome = state.tokens.refresh(refreshToken, clientId, requested);
  switch (outcome.kind) {
    case "ok":
      return { tokens: outcome.tokens, detail: outcome.grace ? "rotation_grace" : null, clientId };
    case "invalid_scope":
      throw new Refusal("invalid_scope", "scope must be within the scope of the original grant.", "scope_not_granted");
    case "invalid_grant": {
      const detail = outcome.reason === "reused" ? REUSE_DETAIL : `refresh_token_${outcome.reason}`;
      const description =
        outcome.reason === "reused"
          ? "The refresh token was already used; every token of this grant is now revoked."
          : "The refresh token is invalid, expired or revoked.";
      throw new Refusal("invalid_grant", description, detail);
    }
  }
}
