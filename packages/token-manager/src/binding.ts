/**
 * Binding a server's sign-in to the browser that began it (login CSRF): the binding a start handler
 * gives the browser in a cookie, its hash kept in the pending record, and the rule at the callback
 * (spec/token-store/README.md, "Binding a sign-in to its browser"). The same module as the Go kit's
 * `binding.go`.
 *
 * @see RFC 9700 §4.7.1; RFC 6749 §10.12
 */
import { base64url, type RandomSource, defaultRandom, sha256Hex } from "./encoding.js";
import { fail } from "./errors.js";
import { ANOTHER_BROWSER, refuseBound } from "./sign-in.js";
import { constantTimeEqual } from "./state.js";

/** The form of a binding the kit makes (32 bytes, base64url): a cookie value of another form counts as none. */
export const BINDING_FORM = /^[A-Za-z0-9_-]{43}$/;

/**
 * Makes a new browser binding: 32 random bytes in base64url without padding (43 characters), the
 * value of the cookie a start handler sets.
 *
 * @example
 * ```ts
 * createBinding(); // "q3Xk…" (43 characters)
 * ```
 * @see RFC 9700 §4.7.1
 */
export const createBinding = (random: RandomSource = defaultRandom): string => base64url(random(new Uint8Array(32)));

/**
 * The `browser` field of a pending record: the lowercase hex SHA-256 of the binding's UTF-8 bytes.
 * The binding itself is never stored, logged or put in a URL.
 *
 * @example
 * ```ts
 * await bindingHash("app-session-7f3a9c2e"); // "02770ca2…78dd"
 * ```
 * @see RFC 9700 §4.7.1
 */
export const bindingHash = (binding: string): Promise<string> => sha256Hex(binding);

/**
 * The rule at the callback (step 6): a record with `browser` needs the binding whose hash it is
 * (compared in constant time); a binding brought to a record without `browser` is refused too (a
 * server binds every sign-in it begins, so an unbound one is not its own). An empty binding counts as
 * none. A record without `browser` taken without a binding is not checked.
 *
 * @throws a `TokenManagerError` `STATE_MISMATCH` ("the sign-in was started in another browser")
 * @see RFC 9700 §4.7.1; RFC 6749 §10.12
 */
export async function checkBinding(browser: string | undefined, binding: string | undefined): Promise<void> {
  if (!binding) return refuseBound(browser);
  if (browser === undefined || !constantTimeEqual(browser, await bindingHash(binding)))
    fail("STATE_MISMATCH", ANOTHER_BROWSER);
}
