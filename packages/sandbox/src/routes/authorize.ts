/**
 * `GET /oauth/authorize`: validates the authorization request and shows the consent page, or
 * approves at once when auto-approve is on.
 *
 * @module
 */
import type { Context } from "hono";
import { consentPage, errorPage, htmlResponse } from "../html.js";
import { redirectTo } from "../redirect.js";
import { checkScope } from "../scopes.js";
import type { SandboxState } from "../tenant-state.js";
import type { AuthorizationRequest } from "../pending.js";
import { idOf, USER_PARAMETER } from "../users.js";

/** The path the consent form posts to. */
export const CONSENT_PATH = "/__sandbox/consent";

const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const SINGLE_PARAMETERS = [
  "response_type",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
  USER_PARAMETER,
] as const;

function invalidPage(message: string): Response {
  return htmlResponse(errorPage("Invalid request", message), 400);
}

/**
 * Handles `GET /oauth/authorize`.
 *
 * - A missing, repeated or unknown `client_id`, or a `redirect_uri` that is missing, repeated or
 *   not registered exactly for the client, is shown as a 400 HTML page and never redirected.
 * - Any other error is redirected to the `redirect_uri` with `error` (`invalid_request`,
 *   `unsupported_response_type` or `invalid_scope`), `error_description` and the unchanged `state`.
 * - A valid request shows the consent page (200), or with auto-approve redirects with a `code`.
 *   When too many requests already wait for consent, it redirects with `temporarily_unavailable`.
 * - The sandbox-only parameter `sandbox_user` names the user to approve as (with auto-approve) or
 *   to preselect on the consent page; without it, the sandbox's first user. One that names no user
 *   is redirected as `invalid_request`. A real tenant ignores it (RFC 6749 §3.1: unknown parameters
 *   are ignored) and signs in whoever is logged in.
 *
 * @see RFC 6749 §4.1.1, §4.1.2.1 (error response), §3.1 (no repeated parameters)
 * @see RFC 7636 §4.3, §4.4.1 (PKCE: code_challenge required, S256 only)
 */
export function authorizeRoute(state: SandboxState) {
  return (c: Context): Response => {
    const params = new URL(c.req.url).searchParams;

    const clientIds = params.getAll("client_id");
    if (clientIds.length !== 1 || clientIds[0] === "") {
      return invalidPage("client_id is missing or given more than once.");
    }
    const client = state.clients.get(clientIds[0] ?? "");
    if (client === undefined) return invalidPage(`The client ${clientIds[0] ?? ""} is not registered.`);

    const redirectUris = params.getAll("redirect_uri");
    if (redirectUris.length !== 1) return invalidPage("redirect_uri is missing or given more than once.");
    const redirectUri = redirectUris[0] ?? "";
    if (!state.clients.hasRedirectUri(client, redirectUri)) {
      return invalidPage("redirect_uri does not match a URI registered for this client.");
    }

    const states = params.getAll("state");
    const stateValue = states.length === 1 && states[0] !== "" ? states[0] : undefined;
    const fail = (error: string, description: string): Response =>
      redirectTo(redirectUri, { error, error_description: description, state: stateValue });

    for (const name of SINGLE_PARAMETERS) {
      if (params.getAll(name).length > 1) return fail("invalid_request", `${name} is given more than once.`);
    }
    const responseType = params.get("response_type");
    if (responseType === null || responseType === "") return fail("invalid_request", "response_type is required.");
    if (responseType !== "code") return fail("unsupported_response_type", "response_type must be code.");
    if (stateValue === undefined) return fail("invalid_request", "state is required.");
    const codeChallenge = params.get("code_challenge");
    if (codeChallenge === null || codeChallenge === "") return fail("invalid_request", "code_challenge is required.");
    if (!CHALLENGE_PATTERN.test(codeChallenge)) {
      return fail("invalid_request", "code_challenge must be 43 base64url characters.");
    }
    const method = params.get("code_challenge_method");
    if (method === null || method === "") return fail("invalid_request", "code_challenge_method is required.");
    if (method !== "S256") return fail("invalid_request", "code_challenge_method must be S256.");

    const scope = params.get("scope");
    let scopes: readonly string[];
    if (scope === null) {
      scopes = client.scopes ?? state.defaultScopes;
    } else {
      const checked = checkScope(scope, client);
      if (!checked.ok) return fail("invalid_scope", checked.description);
      scopes = checked.scopes;
    }

    const chosen = params.get(USER_PARAMETER);
    const user = chosen === null ? state.users.default : state.users.get(chosen);
    if (user === undefined) {
      return fail(
        "invalid_request",
        `${USER_PARAMETER} names no user of this sandbox (its users: ${state.users.describeIds()}).`,
      );
    }
    const request: AuthorizationRequest = {
      clientId: client.id,
      redirectUri,
      scopes,
      state: stateValue,
      codeChallenge,
      user: idOf(user),
    };
    if (state.autoApprove) return approve(state, request);
    const requestId = state.pending.add(request);
    // Full: refuse this request rather than drop another user's open consent page.
    if (requestId === undefined)
      return fail("temporarily_unavailable", "Too many sign-ins are waiting for consent; try again in a few minutes.");
    return htmlResponse(
      consentPage({
        clientId: client.id,
        redirectUri,
        scopes,
        requestId,
        action: CONSENT_PATH,
        users: state.users.list(),
        user: request.user,
      }),
      200,
      redirectUri,
    );
  };
}

/**
 * Approves a validated request as its user: issues a code bound to it and redirects with the code and state.
 *
 * @see RFC 6749 §4.1.2
 */
export function approve(state: SandboxState, request: AuthorizationRequest): Response {
  const code = state.codes.issue({
    clientId: request.clientId,
    user: request.user,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    scopes: request.scopes,
  });
  return redirectTo(request.redirectUri, { code, state: request.state });
}
