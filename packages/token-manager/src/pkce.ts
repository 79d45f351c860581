/**
 * PKCE (RFC 7636): verifier, S256 challenge and their validation.
 *
 * @see RFC 7636 §4.1, §4.2, Appendix B
 */
import { base64url, defaultRandom, isString, type RandomSource } from "./encoding.js";
import { fail } from "./errors.js";

const VERIFIER = /^[\w.~-]{43,128}$/;

/** A PKCE pair: keep `verifier` secret until the exchange; send `challenge` in the authorize URL. */
export interface PkcePair {
  readonly verifier: string;
  readonly challenge: string;
  readonly method: "S256";
}

/** Options of {@link createPkcePair}. */
export interface PkceOptions {
  /** Verifier length, 43–128 (default 64). */
  length?: number;
  /** A `crypto.getRandomValues`-shaped source (default WebCrypto). */
  random?: RandomSource | undefined;
}

/**
 * Creates a code verifier and its S256 challenge. The verifier is BASE64URL of `ceil(length × 3 / 4)`
 * CSPRNG bytes, cut to `length` characters (RFC 7636 §4.1 recommends exactly this for 43 characters):
 * each character carries 6 uniform random bits, so every one of the 64 base64url characters
 * (`A-Z a-z 0-9 - _`, a subset of the unreserved set) is equally likely and there is no modulo bias.
 *
 * @throws a `TokenManagerError` with code `INVALID_VERIFIER` when `length` is not an integer in 43–128.
 * @example
 * ```ts
 * const { verifier, challenge, method } = await createPkcePair(); // method === "S256"
 * ```
 * @see RFC 7636 §4.1 (verifier), §4.2 (challenge); RFC 4648 §5 (base64url)
 */
export async function createPkcePair(options: PkceOptions = {}): Promise<PkcePair> {
  const { length = 64, random = defaultRandom } = options;
  if (!Number.isInteger(length) || length < 43 || length > 128) fail("INVALID_VERIFIER");
  // 6 × length ≤ 8 × ceil(length × 3 / 4): every kept character is made of random bits only.
  const verifier = base64url(random(new Uint8Array(Math.ceil((length * 3) / 4)))).slice(0, length);
  return { verifier, challenge: await deriveCodeChallenge(verifier), method: "S256" };
}

/**
 * Computes `BASE64URL(SHA256(ASCII(verifier)))` with WebCrypto.
 *
 * @throws a `TokenManagerError` with code `INVALID_VERIFIER` (rejects) when the verifier is not 43–128 characters of
 * `A-Z a-z 0-9 - . _ ~`. The error never contains the verifier.
 * @example
 * ```ts
 * await deriveCodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
 * // "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
 * ```
 * @see RFC 7636 §4.2, Appendix B
 */
export async function deriveCodeChallenge(verifier: string): Promise<string> {
  if (!isString(verifier) || !VERIFIER.test(verifier)) fail("INVALID_VERIFIER");
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}
