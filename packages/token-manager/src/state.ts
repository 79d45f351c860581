/**
 * The `state` parameter: random, and compared in constant time.
 *
 * @see RFC 6749 §10.12 (CSRF), §4.1.1
 */
import { base64url, defaultRandom, type RandomSource } from "./encoding.js";

/**
 * Creates a `state` value of 256 random bits (43 base64url characters).
 *
 * @example
 * ```ts
 * createState(); // "5h2QmQd3yK0Zr2zJ7xX1pAq0..."
 * ```
 * @see RFC 6749 §10.12
 */
export const createState = (random: RandomSource = defaultRandom): string => base64url(random(new Uint8Array(32)));

/**
 * Compares two strings in time that depends only on the length of `a`, not on where they differ.
 *
 * @example
 * ```ts
 * constantTimeEqual(received, stored); // true only when exactly equal
 * ```
 * @see RFC 6749 §10.12
 */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  // Past the end of `b`, charCodeAt gives NaN, which `^` reads as 0; the lengths already differ then.
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return !diff;
}
