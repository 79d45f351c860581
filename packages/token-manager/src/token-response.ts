/**
 * Parsing of token endpoint answers: the RFC 6749 §5.1 success body and the §5.2 error body.
 *
 * @see RFC 6749 §5.1, §5.2, §6
 */
import type { OAuthError, RefreshTokenResponse } from "@tenant-integration/types";
import { InvalidResponseError, type OAuthErrorFields } from "./errors.js";

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
 * @throws {@link InvalidResponseError} for non-JSON (an HTML page), a non-object, a missing or
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
  if (!o) throw new InvalidResponseError("Token response is not a JSON object");
  const bad = (field: string): never => {
    throw new InvalidResponseError(`Token response has an invalid ${field}`);
  };
  const { access_token, refresh_token, token_type, expires_in, scope } = o;
  if (!isToken(access_token)) bad("access_token");
  if (refresh_token === undefined ? requireRefreshToken : !isToken(refresh_token)) bad("refresh_token");
  if (typeof token_type !== "string" || token_type.toLowerCase() !== "bearer") bad("token_type");
  if (typeof expires_in !== "number" || !(expires_in > 0) || !Number.isFinite(expires_in)) bad("expires_in");
  if (scope !== undefined && typeof scope !== "string") bad("scope");
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
  const o = asObject(body) as Partial<Record<keyof OAuthError, unknown>> | undefined;
  if (!o || typeof o.error !== "string" || !o.error) return undefined;
  const fields: { error: string; errorDescription?: string; errorUri?: string } = { error: o.error };
  if (typeof o.error_description === "string") fields.errorDescription = o.error_description;
  if (typeof o.error_uri === "string") fields.errorUri = o.error_uri;
  return fields;
}

function asObject(body: unknown): Record<string, unknown> | undefined {
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
}

function isToken(v: unknown): v is string {
  return typeof v === "string" && VSCHAR.test(v);
}
