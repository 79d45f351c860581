/**
 * `POST /__sandbox/consent`: the user's decision on the consent page (a sandbox-only route).
 *
 * @module
 */
import type { Context } from "hono";
import { readBody } from "../body.js";
import { BadRequestError } from "../errors.js";
import { errorPage, htmlResponse } from "../html.js";
import { redirectTo } from "../redirect.js";
import type { SandboxState } from "../tenant-state.js";
import { idOf } from "../users.js";
import { approve } from "./authorize.js";

/**
 * Handles the consent form: `request_id` (the opaque id of the pending request, single use),
 * `decision` (`approve` or `deny`) and `user` (the id of the user to sign in as; optional: without
 * it, the user the authorization request chose). Approval redirects with a code issued to that
 * user, denial with `error=access_denied`; both carry the unchanged state. A bad or expired form, or
 * a `user` that names no user, is a 400 page.
 *
 * @see RFC 6749 §4.1.2 (approval), §4.1.2.1 (access_denied)
 */
export function consentRoute(state: SandboxState) {
  return async (c: Context): Promise<Response> => {
    let body: Record<string, unknown>;
    try {
      body = await readBody(c.req.raw, ["form", "json"]);
    } catch (error) {
      if (error instanceof BadRequestError) return htmlResponse(errorPage("Invalid request", error.message), 400);
      throw error;
    }
    const decision = body["decision"];
    const requestId = body["request_id"];
    const chosen = body["user"];
    if (decision !== "approve" && decision !== "deny") {
      return htmlResponse(errorPage("Invalid request", "decision must be approve or deny."), 400);
    }
    const user = chosen === undefined ? undefined : typeof chosen === "string" ? state.users.get(chosen) : undefined;
    if (chosen !== undefined && user === undefined) {
      return htmlResponse(errorPage("Invalid request", "user names no user of this sandbox."), 400);
    }
    const request = typeof requestId === "string" ? state.pending.take(requestId) : undefined;
    if (request === undefined) {
      return htmlResponse(
        errorPage("Request expired", "This consent page expired or was already used. Start the sign-in again."),
        400,
      );
    }
    if (decision === "deny") {
      return redirectTo(request.redirectUri, {
        error: "access_denied",
        error_description: "The user denied the request.",
        state: request.state,
      });
    }
    return approve(state, user === undefined ? request : { ...request, user: idOf(user) });
  };
}
