/**
 * `POST /oauth/revoke`: disconnects the integration by revoking the token's whole family.
 *
 * @module
 */
import type { Context } from "hono";
import { readBody, requiredString, stringField } from "../body.js";
import { BadRequestError, oauthError } from "../errors.js";
import type { SandboxState } from "../tenant-state.js";
import type { UserId } from "../users.js";

/**
 * Handles a revocation request, form-encoded or JSON: `token` required, `client_id` and
 * `token_type_hint` optional. The hint is read as a string and otherwise ignored: every token type is
 * searched, so a hint the sandbox does not know changes nothing (RFC 7009 §2.1, §2.2). A public
 * client sends its `client_id` (RFC 7009 §5, §2.1 with RFC 6749 §2.3); without it the sandbox lets
 * the token identify its client, as the contract admits. Every field, known or not, is one string,
 * as a form parameter is: a JSON field holding anything else is malformed (the contract's
 * RevocationRequest; RFC 7009 §2.2.1 invalid_request). An access or refresh token
 * revokes every token of its grant. The answer is 200 with no body whether or not the token was
 * valid; a token issued to another client is left alone (and still answered 200, so that the
 * endpoint reveals nothing about tokens of other clients). A family this request revoked goes into
 * the refresh-token ledger as revoked by `revocation`.
 *
 * @see RFC 7009 §2.1 (request; the hint may be ignored; revoking may revoke the whole grant), §2.2 (200 for invalid tokens), §2.2.1 (errors)
 */
export function revokeRoute(state: SandboxState) {
  return async (c: Context): Promise<Response> => {
    let clientId: string | null = null;
    /** The user of the token's grant, once the token is read and known. */
    let user: UserId | null = null;
    const record = (status: number, outcome: string, detail: string | null): void => {
      state.events.record({ endpoint: "revoke", grantType: null, clientId, user, status, outcome, detail });
    };
    try {
      const body = await readBody(c.req.raw, ["form", "json"]);
      for (const name of Object.keys(body)) stringField(body, name);
      const rawClient = body["client_id"];
      clientId = typeof rawClient === "string" ? rawClient : null;
      const token = requiredString(body, "token");
      const id = body["client_id"] === undefined ? state.tokens.clientOf(token) : requiredString(body, "client_id");
      // A hint that is not a string is malformed; any string, known or not, is ignored (RFC 7009 §2.1).
      stringField(body, "token_type_hint");
      clientId = id ?? null;
      if (id === undefined) {
        record(200, "ok", "unknown_token");
        return new Response(null, { status: 200, headers: { "Cache-Control": "no-store" } });
      }
      if (state.clients.get(id) === undefined) {
        record(400, "invalid_client", "unknown_client");
        return oauthError("invalid_client", "The client is not registered.");
      }
      const family = state.tokens.familyOf(token);
      // A token of another client is left alone: its grant, and so its user, is not this call's.
      if (state.tokens.clientOf(token) === id) user = state.tokens.userOf(token) ?? null;
      const result = state.tokens.revoke(token, id);
      if (result === "revoked" && family !== undefined) state.ledger.familyRevoked(family, user, "revocation");
      record(200, "ok", result === "revoked" ? "family_revoked" : result === "unknown" ? "unknown_token" : result);
      return new Response(null, { status: 200, headers: { "Cache-Control": "no-store" } });
    } catch (error) {
      if (!(error instanceof BadRequestError)) throw error;
      record(400, "invalid_request", "malformed_request");
      return oauthError("invalid_request", error.message);
    }
  };
}
