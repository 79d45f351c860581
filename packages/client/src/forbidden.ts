import { ForbiddenError, InsufficientScopeError } from "./errors.js";
import { parseBearerChallenge } from "./www-authenticate.js";

/**
 * Builds the error value of a 403 response: an {@link InsufficientScopeError} when the bearer
 * challenge says `error="insufficient_scope"`, otherwise a {@link ForbiddenError}; both carry the
 * scope the challenge names (`requiredScope`) and the parsed body.
 *
 * @param response - the 403 response (only its `WWW-Authenticate` header is read)
 * @param body - the body as openapi-fetch parsed it
 * @returns the error value the client returns as `error`
 * @example
 * ```ts
 * const error = forbiddenErrorFrom(response, { error: "insufficient_scope" });
 * error.requiredScope; // ["profile:read"] for `Bearer error="insufficient_scope", scope="profile:read"`
 * ```
 * @see RFC 6750 §3 and §3.1
 */
export function forbiddenErrorFrom(response: Response, body: unknown): ForbiddenError {
  const challenge = parseBearerChallenge(response.headers.get("www-authenticate"));
  const requiredScope = challenge?.scope ?? [];
  if (challenge?.error === "insufficient_scope") {
    return new InsufficientScopeError({ requiredScope, errorDescription: challenge.errorDescription, body });
  }
  return new ForbiddenError({ requiredScope, challengeError: challenge?.error, errorDescription: challenge?.errorDescription, body });
}

/** Replaces the error of a 403 result by its {@link ForbiddenError}; other results pass unchanged. */
export function withForbiddenError<R extends { response: Response; error?: unknown }>(result: R): R {
  if (result.response.status !== 403) return result;
  return { error: forbiddenErrorFrom(result.response, result.error), response: result.response } as unknown as R;
}
