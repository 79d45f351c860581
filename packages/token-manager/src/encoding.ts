/**
 * Base64url without padding, on `btoa` (present in every target runtime).
 *
 * @example
 * ```ts
 * base64url(new Uint8Array([251, 255])); // "-_8"
 * ```
 * @see RFC 7636 Appendix A, RFC 4648 §5
 */
export const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/=/g, "")
    .replace(/\+/g, "-")
    .replace(/\//g, "_");

/** Fills `n` bytes from a `getRandomValues`-shaped source. */
export type RandomSource = (bytes: Uint8Array) => Uint8Array;

/** `crypto.getRandomValues`, looked up at call time so that every runtime's WebCrypto is used. */
export const defaultRandom: RandomSource = (bytes) => crypto.getRandomValues(bytes);

/**
 * `typeof v === "string"`, written once for the whole bundle.
 *
 * @example
 * ```ts
 * isString("a"); // true
 * ```
 * @see RFC 6749 Appendix A (every parameter is a string)
 */
export const isString = (v: unknown): v is string => typeof v === "string";

/**
 * The lowercase hex SHA-256 of `text`'s UTF-8 bytes (WebCrypto: every runtime the kit runs on): the
 * key of a pending sign-in, and the hash of a browser binding.
 *
 * @example
 * ```ts
 * await sha256Hex("abc"); // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 * @see FIPS 180-4
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
