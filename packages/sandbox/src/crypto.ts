/**
 * Random values, hashing and comparison on WebCrypto only, so the sandbox runs in any runtime that
 * has `globalThis.crypto` (Node 20+, Deno, Bun, workers).
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * Encodes bytes as base64url without padding.
 *
 * @example base64url(new Uint8Array([251, 255])) // "-_8"
 * @see RFC 7636 Appendix A (base64url encoding without padding)
 */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * Returns an opaque random string of `bytes` random bytes (base64url), with an optional prefix
 * that tells the kind of value apart when reading logs of the sandbox's own tests.
 *
 * @example randomToken("at_") // "at_Vq3…" (32 random bytes)
 * @see RFC 6749 §10.10 (credentials guessing attacks: at least 128 bits of entropy)
 */
export function randomToken(prefix = "", bytes = 32): string {
  const buffer = new Uint8Array(bytes);
  crypto.getRandomValues(buffer);
  return prefix + base64url(buffer);
}

/**
 * Computes the S256 code challenge of a verifier: `BASE64URL(SHA256(ASCII(code_verifier)))`.
 *
 * @example await s256Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") // "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
 * @see RFC 7636 §4.2
 */
export async function s256Challenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(verifier));
  return base64url(new Uint8Array(digest));
}

/**
 * The SHA-256 of a string's UTF-8 bytes, as 64 lowercase hex digits.
 *
 * @example await sha256Hex("abc") // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * @see FIPS 180-4 §6.2 (SHA-256)
 */
export async function sha256Hex(value: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/**
 * Compares two strings in time that depends only on their lengths, not on where they differ.
 *
 * @example timingSafeEqual("abc", "abc") // true
 * @see RFC 7636 §4.6 (the server compares the computed challenge with the stored one)
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  const length = Math.max(left.length, right.length);
  let difference = left.length ^ right.length;
  for (let index = 0; index < length; index += 1) {
    difference |= (left[index] ?? 0) ^ (right[index] ?? 0);
  }
  return difference === 0;
}
