/**
 * Parsing of token endpoint answers: the RFC 6749 §5.1 success body and the §5.2 error body.
 *
 * @see RFC 6749 §5.1, §5.2, §6
 */
import type { OAuthError, RefreshTokenResponse } from "@tenant-integration/types";
import { isString } from "./encoding.js";
import { fail, type OAuthErrorFields } from "./errors.js";

/** A parsed, validated token response: its five fields, with the previous refresh token when a refresh did not rotate it. */
export type ParsedTokenResponse = Required<Omit<RefreshTokenResponse, "scope">> & { scope: string | undefined };

// RFC 6749 Appendix A.12/A.17: tokens are 1*VSCHAR, so they are safe in a header and in JSON.
const VSCHAR = /^[ -~]+$/; // %x20-7E, " " to "~"
const isToken = (v: unknown): v is string => isString(v) && VSCHAR.test(v);

/** The fields of a token response, each with its check, in the order they are checked. */
const CHECKS: Record<keyof ParsedTokenResponse, (v: unknown) => unknown> = {
  access_token: isToken,
  refresh_token: isToken,
  token_type: (v) => isString(v) && v.toLowerCase() === "bearer",
  expires_in: (v) => Number.isFinite(v) && (v as number) > 0,
  scope: (v) => v === undefined || isString(v),
};

/**
 * Validates the body of a successful token response and returns its five fields, nothing else (so an
 * unexpected field, such as an `id_token`, is never stored). Accepts the body as text (what `fetch`
 * gives) or as an already parsed value.
 *
 * @param body - the response text, or a parsed JSON value
 * @param previousRefreshToken - for a refresh: the refresh token to keep when the response has no
 * `refresh_token` field (does not rotate it). Without it (the authorization code grant) the response
 * must carry a `refresh_token`.
 * @throws a `TokenManagerError` with code `INVALID_RESPONSE` for non-JSON (an HTML page), a
 * non-object, a missing or mistyped field, a `token_type` other than Bearer, or an `expires_in` that
 * is not a positive number. The message names the field, never its value.
 * @example
 * ```ts
 * parseTokenResponse('{"access_token":"a","token_type":"Bearer","expires_in":900}', "rt_previous");
 * ```
 * @see RFC 6749 §5.1, §6, §7.1
 */
export function parseTokenResponse(body: unknown, previousRefreshToken?: string): ParsedTokenResponse {
  // A refresh_token field of the body, whatever its value (even null), replaces the previous one.
  const fields: Record<string, unknown> = { refresh_token: previousRefreshToken, ...parseJson(body) };
  const parsed: Record<string, unknown> = {};
  for (const k in CHECKS) {
    if (!CHECKS[k as keyof ParsedTokenResponse](fields[k])) fail("INVALID_RESPONSE", k);
    parsed[k] = fields[k];
  }
  return parsed as ParsedTokenResponse;
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
  const { error, error_description: d, error_uri: u } = parseJson(body) as Partial<Record<keyof OAuthError, unknown>>;
  return isString(error) && error
    ? { error, ...(isString(d) && { errorDescription: d }), ...(isString(u) && { errorUri: u }) }
    : undefined;
}

/**
 * JSON text parsed, anything else as is; `{}` for text that is not JSON and for `null` or `undefined`,
 * so that the result can always be destructured (a non-object then has none of the fields).
 */
export function parseJson(body: unknown): object {
  try {
    return (isString(body) ? JSON.parse(body) : body) ?? {};
  } catch {
    return {};
  }
}
