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
