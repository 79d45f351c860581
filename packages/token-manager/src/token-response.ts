/**
 * Parsing of token endpoint answers: the RFC 6749 §5.1 success body and the §5.2 error body.
 *
 * @see RFC 6749 §5.1, §5.2, §6
 */
import type { OAuthError, RefreshTokenResponse } from "@tenant-integration/types";
import { fail, type OAuthErrorFields } from "./errors.js";

/** A parsed, validated token response. `refresh_token` is absent when a refresh did not rotate it. */
export type ParsedTokenResponse = RefreshTokenResponse;

// RFC 6749 Appendix A.12/A.17: tokens are 1*VSCHAR, so they are safe in a header and in JSON.
const VSCHAR = /^[\x20-\x7e]+$/;

/**
 * Validates the body of a successful token response. Accepts the body as text (what `fetch` gives)
 * or as an already parsed value.
 *
 * @param body - the response text, or a parsed JSON value
 * @param requireRefreshToken - true for the authorization code grant, whose response must carry one
 * @throws a `TokenManagerError` with code `INVALID_RESPONSE` for non-JSON (an HTML page), a non-object, a missing or
 * mistyped field, a `token_type` other than Bearer, or an `expires_in` that is not a positive number.
 * The message names the field, never its value.
 * @example
 * ```ts
 * parseTokenResponse('{"access_token":"a","token_type":"Bearer","expires_in":900}');
 * ```
 * @see RFC 6749 §5.1, §6, §7.1
 */
export function parseTokenResponse(body: unknown, requireRefreshToken = false): ParsedTokenResponse {
  const o = asObject(body);
  const { access_token: a, refresh_token: r, token_type: t, expires_in: e, scope } = o ?? {};
  const invalid = !o
    ? "JSON"
    : !isToken(a)
      ? "access_token"
      : (r === undefined ? requireRefreshToken : !isToken(r))
        ? "refresh_token"
        : typeof t !== "string" || t.toLowerCase() !== "bearer"
          ? "token_type"
          : typeof e !== "number" || !(e > 0 && e < Infinity)
            ? "expires_in"
            : scope !== undefined && typeof scope !== "string" && "scope";
  if (invalid) fail("INVALID_RESPONSE", invalid);
  return o as ParsedTokenResponse;
}

/**
 * Reads an RFC 6749 §5.2 error body, or returns `undefined` when the body is not one.
 *
 * @example
 * ```ts
 * parseOAuthError('{"error":"invalid_grant"}'); // { error: "invalid_grant" }
 * ```
 * @see RFC 6749 §5.2, RFC 7009 §2.2.1
 */
export function parseOAuthError(body: unknown): OAuthErrorFields | undefined {
  const { error, error_description: d, error_uri: u } = (asObject(body) ?? {}) as Partial<Record<keyof OAuthError, unknown>>;
  return typeof error === "string" && error
    ? { error, ...(typeof d === "string" && { errorDescription: d }), ...(typeof u === "string" && { errorUri: u }) }
    : undefined;
}

function asObject(body: unknown): Record<string, unknown> | undefined {
  try {
    if (typeof body === "string") body = JSON.parse(body);
  } catch {
    return undefined;
  }
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
}

function isToken(v: unknown): v is string {
  return typeof v === "string" && VSCHAR.test(v);
}
